// Window-based incremental decoding: decode(ids[prefix:]) minus decode(ids[prefix:read]) is the
// new text, held back while it ends in U+FFFD (an incomplete UTF-8 sequence so far).
#include "abl/text/incremental_decoder.h"

#include "abl/core/error.h"

namespace abl::text {
namespace {

bool ends_with_replacement(const std::string& s) {
  return s.size() >= 3 && s.compare(s.size() - 3, 3, "\xEF\xBF\xBD") == 0;
}

std::vector<int32_t> slice(const std::vector<int32_t>& v, size_t b, size_t e) {
  return std::vector<int32_t>(v.begin() + static_cast<std::ptrdiff_t>(b), v.begin() + static_cast<std::ptrdiff_t>(e));
}

}  // namespace

IncrementalDecoder::IncrementalDecoder(const Tokenizer& tok, bool skip_special_tokens)
    : tok_(&tok), skip_special_(skip_special_tokens) {}

std::string IncrementalDecoder::push(int32_t id) {
  if (id < 0) abl::fail("cannot decode token id {}: token ids are never negative", id);
  ids_.push_back(id);
  const std::string before = tok_->decode(slice(ids_, prefix_, read_), skip_special_);
  const std::string now = tok_->decode(slice(ids_, prefix_, ids_.size()), skip_special_);
  if (now.size() <= before.size() || ends_with_replacement(now) || now.compare(0, before.size(), before) != 0) {
    return "";
  }
  std::string delta = now.substr(before.size());
  text_ += delta;
  prefix_ = read_;
  read_ = ids_.size();
  return delta;
}

std::string IncrementalDecoder::finish() const { return tok_->decode(ids_, skip_special_); }

}  // namespace abl::text
