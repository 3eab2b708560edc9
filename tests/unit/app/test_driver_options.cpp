// The driver's configuration files and the response-prefix rule: inputs/default.ini documents the
// built-in defaults of `run` and must stay equal to them; inputs/demo.ini is read by every
// command the demo runs; a key another command owns in its own section is skipped.
#include <gtest/gtest.h>

#include <boost/any.hpp>

#include "abl/app/cli.h"
#include "abl/app/driver.h"
#include "abl/io/ini.h"
#include "common/temp_dir.h"

using namespace abl::app;

namespace {

po::variables_map parse(const std::string& name, const std::vector<std::string>& args,
                        std::unique_ptr<OptionSet>* keep) {
  for (const Command& c : commands()) {
    if (c.name != name) continue;
    *keep = std::make_unique<OptionSet>(c.name);
    c.declare(**keep);
    declare_common_options(**keep);
    std::vector<std::string> argv = {name};
    argv.insert(argv.end(), args.begin(), args.end());
    return parse_command_line(c, **keep, argv);
  }
  ADD_FAILURE() << "no command " << name;
  return {};
}

std::string text_of(const boost::any& v) {
  if (const auto* s = boost::any_cast<std::string>(&v)) return *s;
  if (const auto* b = boost::any_cast<bool>(&v)) return *b ? "true" : "false";
  if (const auto* i = boost::any_cast<int64_t>(&v)) return std::to_string(*i);
  if (const auto* u = boost::any_cast<uint64_t>(&v)) return std::to_string(*u);
  if (const auto* n = boost::any_cast<int>(&v)) return std::to_string(*n);
  if (const auto* d = boost::any_cast<double>(&v)) return std::to_string(*d);
  return "<unknown type>";
}

const std::vector<std::string> kRequired = {"--model", "m", "--out", "o"};

}  // namespace

TEST(DriverOptions, DefaultIniEqualsTheBuiltInDefaults) {
  const std::string ini = std::string(ABL_SOURCE_DIR) + "/inputs/default.ini";
  std::unique_ptr<OptionSet> k1, k2;
  const auto builtin = parse("run", kRequired, &k1);
  auto args = kRequired;
  args.insert(args.begin(), {"--config", ini});
  const auto from_file = parse("run", args, &k2);
  int checked = 0;
  for (const auto& e : abl::io::read_ini(ini)) {
    std::string name = e.key;
    for (char& c : name) c = c == '_' ? '-' : c;
    ASSERT_TRUE(builtin.count(name)) << "default.ini:" << e.line << ": " << name << " is not an option of run";
    EXPECT_EQ(text_of(from_file[name].value()), text_of(builtin[name].value()))
        << "default.ini:" << e.line << ": " << name << " differs from the built-in default";
    ++checked;
  }
  EXPECT_GE(checked, 25);
}

TEST(DriverOptions, DemoIniServesEveryDemoCommand) {
  const std::string ini = std::string(ABL_SOURCE_DIR) + "/inputs/demo.ini";
  std::unique_ptr<OptionSet> keep;
  auto run = parse("run", {"--config", ini}, &keep);
  EXPECT_EQ(run["out"].as<std::string>(), "outputs/demo");
  EXPECT_EQ(run["max-response-length"].as<int64_t>(), 40);
  auto gen = parse("generate", {"--config", ini, "--prompts", "p"}, &keep);
  EXPECT_EQ(gen["max-new-tokens"].as<int64_t>(), 40);
  auto info = parse("info", {"--config", ini}, &keep);
  EXPECT_EQ(info["model"].as<std::string>(), "tests/fixtures/organism");
}

TEST(DriverOptions, AnotherCommandsKeyInItsOwnSectionIsSkipped) {
  abl::testing::TempDir dir;
  // [export] out is the exported model folder; [output] out is the run folder.
  const auto cfg = dir.write("c.ini", "[output]\nout = runs/a\n[export]\nout = models/a\ntrial = 3\n");
  std::unique_ptr<OptionSet> keep;
  auto sweep = parse("sweep", {"--config", cfg, "--model", "m"}, &keep);
  EXPECT_EQ(sweep["out"].as<std::string>(), "runs/a");
  auto exp = parse("export", {"--config", cfg, "--run-dir", "runs/a"}, &keep);
  EXPECT_EQ(exp["out"].as<std::string>(), "models/a");
  EXPECT_EQ(exp["trial"].as<int64_t>(), 3);
}

TEST(ResponsePrefix, CommonPrefixRule) {
  EXPECT_EQ(common_response_prefix({}), "");
  EXPECT_EQ(common_response_prefix({"Sure, here", "I'm sorry"}), "");
  EXPECT_EQ(common_response_prefix({"Answer: yes", "Answer: no"}), "Answer:");  // trailing space removed
  EXPECT_EQ(common_response_prefix({"<think>\nThe user", "<think>\nHmm"}), "<think></think>");
  EXPECT_EQ(common_response_prefix({"[THINK]a", "[THINK]b"}), "[THINK][/THINK]");
  // Never ends inside a UTF-8 sequence: é is C3 A9, è is C3 A8.
  EXPECT_EQ(common_response_prefix({"caf\xc3\xa9", "caf\xc3\xa8"}), "caf");
}
