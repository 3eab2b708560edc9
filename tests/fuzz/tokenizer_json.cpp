// Fuzz target: loading a tokenizer.json (Tokenizer::from_json_text: model, added tokens,
// normalizers, pre-tokenizers with user regexes, post-processors, decoders). A tokenizer that
// loads must then encode a few probe strings into ids inside its vocabulary, and decode those ids
// again without an error (encode may refuse a probe with abl::Error, decode of its ids may not);
// with add_special_tokens, encode and decode must not crash. The probes are short, so that a
// pathological user regex shows up as a slow input rather than stopping the run.
#include <vector>

#include "abl/text/tokenizer.h"
#include "fuzz_target.h"

namespace {

const char* const kProbes[] = {
    "",
    "Hello world",
    "  two  spaces\tand a tab\r\n\n",
    "caf\xc3\xa9 cafe\xcc\x81 \xe4\xbd\xa0\xe5\xa5\xbd \xf0\x9f\x91\x8d",
    "<|im_start|>user\nHi<|im_end|>\n<s>[INST] it's 42 [/INST]</s>",
    "\xe2\x96\x81x\xe2\x96\x81\xe2\x96\x81 ab",
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  abl::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return abl::fuzz::run_input([&] {
    const abl::text::Tokenizer tok =
        abl::text::Tokenizer::from_json_text(abl::fuzz::as_text(data, size), "tokenizer.json");
    ABL_FUZZ_CHECK(tok.vocab_size() > 0, "");
    for (const char* probe : kProbes) {
      std::vector<int32_t> ids;
      try {
        ids = tok.encode(probe, false);
      } catch (const abl::Error&) {
        continue;
      }
      // The model's ids: tokens of the vocabulary, and decodable.
      for (int32_t id : ids) {
        ABL_FUZZ_CHECK(id >= 0 && id < tok.vocab_size(), std::to_string(id));
        try {
          tok.id_to_token(id);
        } catch (const abl::Error& e) {
          abl::fuzz::violated("encode gave an id without a token", __FILE__, __LINE__, e.what());
        }
      }
      try {
        tok.decode(ids, false);
        tok.decode(ids, true);
      } catch (const abl::Error& e) {
        abl::fuzz::violated("decode of ids from encode threw", __FILE__, __LINE__, e.what());
      }
      // The special tokens the post-processor adds are checked against the vocabulary at load
      // (corpus/tokenizer_json/finding-template-id-*): every id has a token.
      const std::vector<int32_t> with_special = tok.encode(probe, true);
      for (int32_t id : with_special) {
        try {
          tok.id_to_token(id);
        } catch (const abl::Error& e) {
          abl::fuzz::violated("encode with special tokens gave an id without a token", __FILE__, __LINE__, e.what());
        }
      }
      try {
        tok.decode(with_special, false);
        tok.decode(with_special, true);
      } catch (const abl::Error& e) {
        abl::fuzz::violated("decode of ids from encode with special tokens threw", __FILE__, __LINE__, e.what());
      }
    }
  });
}
