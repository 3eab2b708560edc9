// Fuzz target: prompt files (load_prompts), text, JSON Lines, JSON, CSV and TSV (Parquet has its
// own target). Input byte 0: bits 2-3 the name: 0 = by bit 0 (set: .jsonl, clear: .txt), 1 = .json,
// 2 = .csv, 3 = .tsv; bit 1 = a split follows as the first line; the rest is the file (column
// "text"). Accepted prompts are valid UTF-8 without NUL, not blank, in file order, with the lines
// (or the Parquet rows, for an input that begins with PAR1) they came from.
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
  static const char* const names[] = {"prompts.txt", "prompts.jsonl", "prompts.json", "prompts.json",
                                      "prompts.csv",  "prompts.csv",   "prompts.tsv",  "prompts.tsv"};
  const int name = ((data[0] >> 1) & 6) | (data[0] & 1);
  src.path = abl::fuzz::scratch().write(names[name], rest);
  const bool shared_lines = name == 2 || name == 3;  // a JSON array may hold several prompts on a line
  int64_t lines = 1;
  for (char c : rest) lines += c == '\n';
  return abl::fuzz::run_input([&] {
    const std::vector<abl::io::Prompt> prompts = abl::io::load_prompts(src);
    ABL_FUZZ_CHECK(!prompts.empty(), "");
    int64_t last = 0, last_row = -1;
    for (const abl::io::Prompt& p : prompts) {
      ABL_FUZZ_CHECK(abl::valid_utf8(p.text), p.text);
      ABL_FUZZ_CHECK(p.text.find_first_not_of(" \t\r\n\v\f") != std::string::npos, "blank prompt");
      if (p.row >= 0) {
        ABL_FUZZ_CHECK(p.line == 0 && p.row > last_row, std::to_string(p.row));
        last_row = p.row;
        continue;
      }
      ABL_FUZZ_CHECK((p.line > last || (shared_lines && p.line == last)) && p.line >= 1 && p.line <= lines,
                     std::to_string(p.line));
      ABL_FUZZ_CHECK(p.text.find('\0') == std::string::npos, "a NUL in a prompt");
      last = p.line;
    }
  });
}
