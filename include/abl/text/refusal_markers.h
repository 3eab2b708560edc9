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
