// Window-based incremental decoding: decode(ids[prefix:]) minus decode(ids[prefix:read]) is the
// new text, held back while it ends in U+FFFD (an incomplete UTF-8 sequence so far) or while the
// last id is a byte-fallback token (<0xHH>): a run of byte tokens that turns out invalid UTF-8
// decodes to one U+FFFD per byte, also for the bytes before, so "U" of <0x55> is not final until
// the run ends.
#include "abl/text/incremental_decoder.h"

#include "abl/core/error.h"

namespace abl::text {
namespace {

bool is_byte_token(const Tokenizer& tok, int32_t id) {
  if (id >= tok.vocab_size()) return false;
  try {
    const std::string t = tok.id_to_token(id);
    return t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>';
  } catch (const Error&) {
    return false;  // an id without a token: decoding skips it
  }
}

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
  if (is_byte_token(*tok_, id)) return "";
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
