// The command line this process was started with, recorded once by main_entry (cli.cpp), for
// provenance: export's model card quotes it so the export can be reproduced.
#pragma once
#include <string>
#include <vector>

namespace abl::app {

// Records argv (called once, at the start of main_entry).
void record_command_line(int argc, char** argv);
// argv joined with spaces, each argument quoted for a POSIX shell where it needs it; "" before
// record_command_line.
const std::string& command_line();
// One argument as a POSIX shell reads it back: as is when it holds only safe characters, else in
// single quotes (a quote inside written '\'').
std::string shell_quote(const std::string& arg);

}  // namespace abl::app
