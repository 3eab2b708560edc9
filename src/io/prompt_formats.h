// The readers of each prompt-file format that load_prompts (prompt_dataset.h) dispatches to. Each
// returns every prompt of the file in order, with where it is, after the checks all formats
// share: valid UTF-8 and not blank. Errors name FILE:LINE (FILE row N for Parquet).
#pragma once
#include <string>
#include <vector>

#include "abl/io/prompt_dataset.h"

namespace abl::io::prompt_formats {

// One prompt per line (text), or one JSON object per line (JSON Lines) whose `column` holds it.
std::vector<Prompt> read_lines(const std::string& path, bool json_lines, const std::string& column);
// A JSON array of objects (whose `column` holds the prompt) or of strings; `content` is the file.
std::vector<Prompt> read_json_array(const std::string& path, const std::string& content, const std::string& column);
// RFC 4180 CSV (or TSV with '\t'): a header row naming the columns, quoted fields may span lines.
std::vector<Prompt> read_delimited(const std::string& path, const std::string& content, char delimiter,
                                   const std::string& column);
std::vector<Prompt> read_parquet(const std::string& path, const std::string& column);

// The file's bytes, with a UTF-8 byte order mark removed; every line checked to be valid UTF-8.
std::string read_utf8_file(const std::string& path);

}  // namespace abl::io::prompt_formats
