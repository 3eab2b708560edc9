// Fuzz target: a tiktoken tokenizer folder (Tokenizer::from_tiktoken): the remote code the split
// pattern and the special-id count are read from (a small Python reader, then the pattern with
// its `&&` class intersections rewritten for PCRE2), and optionally the ranks. The input is
// tokenization_kimi.py, then, after a NUL byte if there is one, tiktoken.model; without a NUL the
// fixture's vocabulary is used. tokenizer_config.json is the fixture's. A folder that loads must
// encode the probes into ids inside its vocabulary that decode again without an error.
#include <fstream>
#include <sstream>
#include <vector>

#include "abl/text/tokenizer.h"
#include "fuzz_target.h"

namespace {

const char* const kProbes[] = {
    "",
    "Hello WORLD, I'M here 12345\r\n\n  x",
    "\xe4\xb8\xad\xe6\x96\x87" "abc \xe3\x81\x82\xe3\x81\x84 caf\xc3\xa9 cafe\xcc\x81 \xf0\x9f\x91\x8d",
    "<|im_user|>user<|im_middle|>hi<|im_end|>[BOS]<|reserved_token_1515|>",
};

std::string fixture_file(const char* name) {
  std::ifstream in(std::string(ABL_FIXTURE_DIR) + "/tiktoken/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

const std::string& fixture_ranks() {
  static const std::string ranks = fixture_file("tiktoken.model");
  return ranks;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  abl::fuzz::quiet_logs();
  abl::fuzz::scratch().write("tokenizer_config.json", fixture_file("tokenizer_config.json"));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input = abl::fuzz::as_text(data, size);
  const size_t nul = input.find('\0');
  abl::fuzz::scratch().write("tokenization_kimi.py", input.substr(0, nul));
  abl::fuzz::scratch().write("tiktoken.model",
                             nul == std::string_view::npos ? std::string_view(fixture_ranks()) : input.substr(nul + 1));
  return abl::fuzz::run_input([&] {
    const abl::text::Tokenizer tok = abl::text::Tokenizer::from_tiktoken(abl::fuzz::scratch().dir().string());
    ABL_FUZZ_CHECK(tok.vocab_size() > 256, std::to_string(tok.vocab_size()));
    for (const char* probe : kProbes) {
      const std::vector<int32_t> ids = tok.encode(probe, false);
      for (int32_t id : ids) ABL_FUZZ_CHECK(id >= 0 && id < tok.vocab_size(), std::to_string(id));
      try {
        tok.decode(ids, false);
      } catch (const abl::Error& e) {
        abl::fuzz::violated("decode of ids from encode threw", __FILE__, __LINE__, e.what());
      }
    }
  });
}
