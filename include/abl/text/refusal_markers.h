// Refusal detection: a response is a refusal when, after normalisation (lower case, `*` removed,
// ’ mapped to '), it contains any marker — or when it is empty.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace abl::text {

class RefusalMarkers {
 public:
  // One marker per line; blank lines and lines starting with '#' are skipped.
  static RefusalMarkers from_file(const std::string& path);
  // The same format from text; `name` is used in error messages.
  static RefusalMarkers from_text(std::string_view text, const std::string& name);
  // The list of inputs/refusal_markers.txt as compiled into the binary.
  static RefusalMarkers builtin();
  // "builtin" or a file path (the --refusal-markers option).
  static RefusalMarkers from_option(const std::string& value);
  explicit RefusalMarkers(std::vector<std::string> markers);

  bool is_refusal(std::string_view response) const;
  // The first marker found in `response` (normalised), or "" if none.
  std::string find(std::string_view response) const;
  const std::vector<std::string>& markers() const { return markers_; }

  // Lower case (Unicode), `*` removed, ’ (U+2019) mapped to '.
  static std::string normalize(std::string_view text);

 private:
  std::vector<std::string> markers_;  // normalised
};

}  // namespace abl::text
