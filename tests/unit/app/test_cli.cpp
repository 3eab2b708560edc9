// Option parsing: command line, config files, precedence and error messages; and the binary's
// own behaviour on --version, --help and bad input (run as a subprocess).
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "abl/app/backend.h"
#include "abl/app/cli.h"
#include "abl/core/error.h"
#include "common/temp_dir.h"

using namespace abl::app;

namespace {

const Command& command(const std::string& name) {
  for (const Command& c : commands()) {
    if (c.name == name) return c;
  }
  throw std::runtime_error("no command " + name);
}

po::variables_map parse(const std::string& cmd_name, const std::vector<std::string>& args,
                        std::unique_ptr<OptionSet>* keep) {
  const Command& cmd = command(cmd_name);
  *keep = std::make_unique<OptionSet>(cmd.name);
  declare_common_options(**keep);
  cmd.declare(**keep);
  return parse_command_line(cmd, **keep, args);
}

std::string parse_error(const std::string& cmd, const std::vector<std::string>& args) {
  std::unique_ptr<OptionSet> keep;
  try {
    parse(cmd, args, &keep);
  } catch (const abl::Error& e) {
    return e.what();
  }
  return "";
}

struct RunResult {
  int status;
  std::string output;
};

RunResult run_binary(const std::string& args) {
  std::string cmd = std::string(ABL_BINARY) + " " + args + " 2>&1";
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe.get())) > 0) out.append(buf.data(), n);
  int status = pclose(pipe.release());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace

TEST(Cli, CommandLineValues) {
  std::unique_ptr<OptionSet> keep;
  auto vm = parse("prompts", {"--model", "m", "--prompts", "p.txt", "--split", "[:4]", "--show", "3"}, &keep);
  EXPECT_EQ(vm["model"].as<std::string>(), "m");
  EXPECT_EQ(vm["split"].as<std::string>(), "[:4]");
  EXPECT_EQ(vm["show"].as<int64_t>(), 3);
  EXPECT_EQ(vm["chat-template"].as<std::string>(), "auto");
}

TEST(Cli, ConfigFileWithSectionsAndPrecedence) {
  abl::testing::TempDir dir;
  auto cfg = dir.write("run.ini",
                       "[model]\nmodel = from-config\nchat_template = chatml\n"
                       "[prompts]\nprompts = p.txt\nshow = 7\n"
                       "[tokenize]\nspecial = true\n");  // another command's option: skipped
  std::unique_ptr<OptionSet> keep;
  auto vm = parse("prompts", {"--config", cfg, "--show", "2"}, &keep);
  EXPECT_EQ(vm["model"].as<std::string>(), "from-config");
  EXPECT_EQ(vm["chat-template"].as<std::string>(), "chatml");  // underscore accepted
  EXPECT_EQ(vm["show"].as<int64_t>(), 2);                      // command line wins
  EXPECT_EQ(vm["prompts"].as<std::string>(), "p.txt");
}

TEST(Cli, ErrorsNameTheOption) {
  EXPECT_NE(parse_error("prompts", {"--model", "m", "--prompts", "p", "--bogus", "1"}).find("bogus"),
            std::string::npos);
  std::string bad = parse_error("prompts", {"--model", "m", "--prompts", "p", "--show", "many"});
  EXPECT_NE(bad.find("show"), std::string::npos) << bad;
  EXPECT_NE(bad.find("many"), std::string::npos) << bad;
  EXPECT_NE(parse_error("prompts", {"--prompts", "p"}).find("model"), std::string::npos);
  // No abbreviations: --mod is not --model.
  EXPECT_NE(parse_error("prompts", {"--mod", "m", "--prompts", "p"}).find("mod"), std::string::npos);
}

TEST(Cli, ConfigFileErrorsNameFileAndLine) {
  abl::testing::TempDir dir;
  auto unknown = dir.write("u.ini", "[model]\nmodel = m\n\nno_such_option = 1\n");
  std::string e1 = parse_error("prompts", {"--config", unknown, "--prompts", "p"});
  EXPECT_NE(e1.find("u.ini:4"), std::string::npos) << e1;
  EXPECT_NE(e1.find("no_such_option"), std::string::npos) << e1;

  auto badval = dir.write("b.ini", "model = m\nprompts = p\nshow = lots\n");
  std::string e2 = parse_error("prompts", {"--config", badval});
  EXPECT_NE(e2.find("b.ini:3"), std::string::npos) << e2;
  EXPECT_NE(e2.find("show"), std::string::npos) << e2;

  auto section = dir.write("s.ini", "[tokenize]\nmodel = m\n");
  std::string e3 = parse_error("prompts", {"--config", section, "--prompts", "p"});
  EXPECT_NE(e3.find("s.ini:2"), std::string::npos) << e3;
  EXPECT_NE(e3.find("[model]"), std::string::npos) << e3;

  auto twice = dir.write("t.ini", "model = a\nmodel = b\n");
  EXPECT_NE(parse_error("prompts", {"--config", twice, "--prompts", "p"}).find("t.ini:2"),
            std::string::npos);
  EXPECT_NE(parse_error("prompts", {"--config", dir.file("none.ini")}).find("none.ini"),
            std::string::npos);
}

TEST(Cli, FsdpSectionAliases) {
  abl::testing::TempDir dir;
  auto cfg = dir.write("fsdp.ini",
                       "[fsdp]\nuse_fsdp = true\nfsdp_sharding_strategy = FULL_SHARD\n"
                       "fsdp_offload_params = true\nfsdp_auto_wrap_policy = TRANSFORMER_BASED_WRAP\n");
  std::unique_ptr<OptionSet> keep;
  auto vm = parse("residuals", {"--config", cfg, "--model", "m", "--good", "g", "--bad", "b", "--out", "o"}, &keep);
  EXPECT_EQ(vm["sharding"].as<std::string>(), "FULL_SHARD");
  EXPECT_TRUE(vm["offload-params"].as<bool>());
  auto off = dir.write("off.ini", "[fsdp]\nuse_fsdp = false\n");
  auto vm2 = parse("residuals", {"--config", off, "--model", "m", "--good", "g", "--bad", "b", "--out", "o"}, &keep);
  EXPECT_EQ(vm2["sharding"].as<std::string>(), "NO_SHARD");
  auto bad = dir.write("bad.ini", "[fsdp]\nfsdp_min_num_params = 1000000\n");
  EXPECT_NE(parse_error("residuals", {"--config", bad, "--model", "m", "--good", "g", "--bad", "b", "--out", "o"})
                .find("bad.ini:2"),
            std::string::npos);
}

TEST(Cli, EveryCommandHasHelp) {
  for (const Command& c : commands()) {
    RunResult r = run_binary(c.name + " --help");
    EXPECT_EQ(r.status, 0) << c.name << ": " << r.output;
    EXPECT_NE(r.output.find("Usage: abliterate " + c.name), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("--config"), std::string::npos) << r.output;
  }
}

TEST(Cli, BinaryVersionAndErrors) {
  RunResult v = run_binary("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.output.find("abliterate"), std::string::npos);
  EXPECT_NE(v.output.find("CUDA:"), std::string::npos);
  EXPECT_NE(v.output.find("NCCL:"), std::string::npos);
  EXPECT_NE(v.output.find("MPI:"), std::string::npos);
  EXPECT_NE(v.output.find("HDF5:"), std::string::npos);
  EXPECT_NE(v.output.find("CPU kernels:"), std::string::npos);

  RunResult overview = run_binary("--help");
  EXPECT_EQ(overview.status, 0);
  for (const Command& c : commands()) EXPECT_NE(overview.output.find(c.name), std::string::npos);

  RunResult unknown = run_binary("frobnicate");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.output.find("frobnicate"), std::string::npos);

  RunResult bad = run_binary("tokenize --model /nonexistent/dir < /dev/null");
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.output.find("/nonexistent/dir"), std::string::npos) << bad.output;
}

// A folder with a tiktoken tokenizer and no tokenizer.json (Kimi-K2, Moonlight) tokenizes; one with
// neither says so.
TEST(Cli, TokenizeReadsATiktokenFolder) {
  abl::testing::TempDir dir;
  const std::string input = dir.write("in.jsonl", R"({"text": "GPT4中文abc123456"})" "\n" R"({"text": "<|im_user|>hi"})" "\n");
  const RunResult r = run_binary("tokenize --model " + std::string(ABL_FIXTURE_DIR) + "/tiktoken --decode --input " + input);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find(R"("decoded":"GPT4中文abc123456")"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(R"({"decoded":"<|im_user|>hi","ids":[1503,)"), std::string::npos) << r.output;
  const RunResult none = run_binary("tokenize --model " + dir.path().string() + " < /dev/null");
  EXPECT_EQ(none.status, 1);
  EXPECT_NE(none.output.find("has no tokenizer.json (nor a tiktoken.model)"), std::string::npos) << none.output;
}

// ABL_CPU_ISA forces a kernel variant (--version says which); one this build lacks fails at start.
TEST(Cli, CpuIsaOverride) {
  const bool native = run_binary("--version").output.find("native (-march=native build)") != std::string::npos;
  ::setenv("ABL_CPU_ISA", "baseline", 1);
  RunResult base = run_binary("--version");
  ::setenv("ABL_CPU_ISA", "sse9", 1);
  RunResult bad = run_binary("--version");
  RunResult bad_cmd = run_binary("tokenize --model /nonexistent/dir < /dev/null");
  ::unsetenv("ABL_CPU_ISA");
  if (!native) {
    EXPECT_EQ(base.status, 0) << base.output;
    EXPECT_NE(base.output.find("CPU kernels:   baseline"), std::string::npos) << base.output;
  }
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("ABL_CPU_ISA=sse9 names no kernel variant of this build"), std::string::npos) << bad.output;
  EXPECT_EQ(bad_cmd.status, 2) << bad_cmd.output;
  EXPECT_NE(bad_cmd.output.find("ABL_CPU_ISA=sse9"), std::string::npos) << bad_cmd.output;
}

// inputs/default.ini configures every command that reads it: plan takes its [engine] keys too
// (backend = auto plans for GPU nodes), and --backend cuda without a device names the reason.
TEST(Cli, DefaultIniServesPlanAndBackendErrorsAreClear) {
  const std::string ini = std::string(ABL_SOURCE_DIR) + "/inputs/default.ini";
  RunResult plan = run_binary("plan --config " + ini + " --model synthetic:llama-3.1-8b");
  EXPECT_EQ(plan.status, 0) << plan.output;
  EXPECT_NE(plan.output.find("cuda"), std::string::npos) << plan.output;
  if (abl::app::cuda_backend_available()) return;
  RunResult gen = run_binary("generate --model synthetic:tiny-llama --prompts /dev/null --backend cuda");
  EXPECT_EQ(gen.status, 1) << gen.output;
  EXPECT_NE(gen.output.find("--backend cuda"), std::string::npos) << gen.output;
}
