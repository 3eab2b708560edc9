// Where the data bundled with abliterate lies: the default configuration, the prompt sets, the
// refusal markers, the grids (the repository's inputs/ folder). An installed binary finds them at
// <prefix>/share/abliterate next to <prefix>/bin/abliterate (a relocatable install tree, see
// docs/install.md); a binary in a build tree uses the source tree's inputs/. The answer depends
// only on where the executable lies, so every rank of a job gets the same one.
#pragma once
#include <string>

namespace abl {

// The bundled data folder (no trailing slash); an error naming the places looked at when there
// is none.
std::string bundled_data_dir();
// A file of it, e.g. bundled_file("prompts/harmless.txt").
std::string bundled_file(const std::string& relative);

// The folder of the running executable ("" when /proc/self/exe cannot be read).
std::string executable_dir();

}  // namespace abl
