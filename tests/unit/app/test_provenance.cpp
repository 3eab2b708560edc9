// run.json's options (provenance.h): every option of a command, given or defaulted, goes into the
// record and comes back through --rerun exactly (doubles included), below the command line.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "abl/app/cli.h"
#include "abl/app/provenance.h"
#include "common/error_of.h"
#include "common/temp_dir.h"

using namespace abl::app;

namespace {

po::variables_map parse(const std::string& name, const std::vector<std::string>& args, std::unique_ptr<OptionSet>* keep) {
  for (const Command& c : commands()) {
    if (c.name != name) continue;
    *keep = std::make_unique<OptionSet>(c.name);
    c.declare(**keep);
    declare_common_options(**keep);
    return parse_command_line(c, **keep, args);
  }
  ADD_FAILURE() << "no command " << name;
  return {};
}

std::string record(const abl::testing::TempDir& dir, const std::string& command, const nlohmann::ordered_json& options) {
  nlohmann::ordered_json rec = {{"schema", kRunRecordSchema}, {"command", command}, {"options", options}};
  return dir.write("run.json", rec.dump(2));
}

}  // namespace

TEST(Provenance, RerunGivesBackEveryOptionExactly) {
  abl::testing::TempDir dir;
  std::unique_ptr<OptionSet> k1, k2, k3;
  const auto first = parse("run",
                           {"--model", "m", "--out", "o", "--winsorize-quantile", "0.1234567890123456789", "--trials",
                            "17", "--store-responses", "--system-prompt", "Sei un assistente \"utile\" ✓",
                            "--row-normalization", "pre"},
                           &k1);
  const nlohmann::ordered_json options = options_json(first);
  EXPECT_FALSE(options.contains("help"));
  EXPECT_EQ(options["trials"], 17);
  EXPECT_EQ(options["store-responses"], true);
  const std::string path = record(dir, "run", options);
  const auto again = parse("run", {"--rerun", path}, &k2);
  EXPECT_EQ(options_json(again), options);  // every value, with its type, to the last bit
  // The command line overrides the record.
  const auto moved = parse("run", {"--rerun", path, "--out", "elsewhere", "--trials", "3"}, &k3);
  EXPECT_EQ(moved["out"].as<std::string>(), "elsewhere");
  EXPECT_EQ(moved["trials"].as<int64_t>(), 3);
  EXPECT_DOUBLE_EQ(moved["winsorize-quantile"].as<double>(), 0.1234567890123456789);
}

TEST(Provenance, RerunErrorsNameTheFile) {
  abl::testing::TempDir dir;
  const std::string path = record(dir, "run", {{"trials", 5}});
  EXPECT_NE(abl::testing::thrown_error_of([&] { rerun_options(path, "sweep"); }).find(path + " holds no record of `abliterate sweep`"),
            std::string::npos);
  const std::string bad = dir.write("other.json", R"({"schema": "something-else"})");
  EXPECT_NE(abl::testing::thrown_error_of([&] { rerun_options(bad, "run"); }).find("is not a run record"), std::string::npos);
  const std::string old = record(dir, "run", {{"no-such-option", 1}});
  std::unique_ptr<OptionSet> k;
  EXPECT_NE(abl::testing::thrown_error_of([&] { parse("run", {"--rerun", old, "--model", "m"}, &k); })
                .find("option 'no-such-option' of the recorded run is not an option"),
            std::string::npos);
  // A record of an earlier command of the folder, from its history.
  const std::string hist = dir.write(
      "hist.json", nlohmann::json({{"schema", kRunRecordSchema}, {"command", "sweep"}, {"options", nlohmann::json::object()},
                                   {"history", {{{"command", "baseline"}, {"options", {{"max-response-length", 9}}}}}}})
                       .dump());
  const auto opts = rerun_options(hist, "baseline");
  ASSERT_EQ(opts.size(), 1u);
  EXPECT_EQ(opts[0].second, "9");
}
