// The command-line front end: one binary, subcommands, options from the command line and
// from an INI config file (`--config FILE`), the command line taking precedence.
#pragma once
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace abl::app {
namespace po = boost::program_options;

// Options of one subcommand. Each group is also a config-file section: an option declared in
// group "model" is written `[model]` / `chat-template = chatml` (or at top level) in a config file.
class OptionSet {
 public:
  explicit OptionSet(const std::string& command);
  po::options_description_easy_init group(const std::string& section, const std::string& caption);
  // All groups in one description; call after the last group() call.
  const po::options_description& all() const;
  // Config-file section of an option ("" if unknown).
  std::string section_of(const std::string& name) const;
  bool has(const std::string& name) const;
  std::string help_text() const;

 private:
  std::string command_;
  mutable std::unique_ptr<po::options_description> all_;
  std::deque<std::pair<std::string, po::options_description>> groups_;
};

struct Command {
  std::string name;
  std::string summary;
  std::string usage;  // e.g. "--model DIR [--special] < lines.jsonl"
  std::function<void(OptionSet&)> declare;
  std::function<int(const po::variables_map&)> run;
};

// Every subcommand, in the order `abliterate --help` lists them.
const std::vector<Command>& commands();

// Parses argv for `cmd` (argv[0] is the subcommand name), merges a --config file,
// and returns the variables. Throws abl::Error naming the option or FILE:LINE at fault.
po::variables_map parse_command_line(const Command& cmd, const OptionSet& opts,
                                     const std::vector<std::string>& args);

int main_entry(int argc, char** argv);

// Options every subcommand has (config, logging, help).
void declare_common_options(OptionSet& opts);
// The logging options (--log-level, --log-all-ranks, --quiet), parsed; --config is read by
// parse_command_line itself.
struct LogOptions {
  std::string level = "info";
  bool all_ranks = false;
  bool quiet = false;
};
LogOptions parse_log_options(const po::variables_map& vm);

}  // namespace abl::app
