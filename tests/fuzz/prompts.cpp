// Fuzz target: prompt files (load_prompts), text and JSONL. Input byte 0: bit 0 = JSONL (.jsonl,
// column "text"), bit 1 = a split follows as the first line; the rest is the file. Accepted
// prompts are valid UTF-8, not blank, in file order, with the lines they came from.
#include "abl/core/utf8.h"
#include "abl/io/prompt_dataset.h"
#include "fuzz_target.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  abl::fuzz::quiet_logs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view rest = abl::fuzz::as_text(data + 1, size - 1);
  abl::io::PromptSource src;
  if (data[0] & 2) {
    const size_t nl = rest.find('\n');
    src.split = std::string(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
  }
  const bool jsonl = data[0] & 1;
  src.path = abl::fuzz::scratch().write(jsonl ? "prompts.jsonl" : "prompts.txt", rest);
  int64_t lines = 1;
  for (char c : rest) lines += c == '\n';
  return abl::fuzz::run_input([&] {
    const std::vector<abl::io::Prompt> prompts = abl::io::load_prompts(src);
    ABL_FUZZ_CHECK(!prompts.empty(), "");
    int64_t last = 0;
    for (const abl::io::Prompt& p : prompts) {
      ABL_FUZZ_CHECK(abl::valid_utf8(p.text), p.text);
      ABL_FUZZ_CHECK(p.text.find_first_not_of(" \t\r\n\v\f") != std::string::npos, "blank prompt");
      ABL_FUZZ_CHECK(p.line > last && p.line <= lines, std::to_string(p.line));
      last = p.line;
    }
  });
}
