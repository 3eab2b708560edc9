// The typed option groups: each parse function fills its struct from the parsed command line
// (defaults, given values, the fallbacks between groups) and rejects bad values with the message
// the driver tests and users see.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "abl/app/cli.h"
#include "abl/app/driver_options.h"
#include "abl/app/model_options.h"
#include "common/error_of.h"

using namespace abl::app;
using abl::testing::error_of;

namespace {

const std::vector<std::string> kRun = {"--model", "m", "--good", "g.txt", "--bad", "b.txt", "--out", "o"};

po::variables_map parse(const std::string& name, std::vector<std::string> args, std::unique_ptr<OptionSet>* keep) {
  for (const Command& c : commands()) {
    if (c.name != name) continue;
    *keep = std::make_unique<OptionSet>(c.name);
    declare_common_options(**keep);
    c.declare(**keep);
    return parse_command_line(c, **keep, args);
  }
  throw std::runtime_error("no command " + name);
}

// `run` with the required options plus `extra`, parsed into typed options.
DriverOptions run_options(std::vector<std::string> extra = {}) {
  std::unique_ptr<OptionSet> keep;
  std::vector<std::string> args = kRun;
  args.insert(args.end(), extra.begin(), extra.end());
  return parse_driver_options(parse("run", args, &keep));
}

// The message parse_driver_options gives for `run` with `extra`, "" when it accepts them.
std::string run_error(std::vector<std::string> extra) {
  return error_of([&] { run_options(extra); });
}

}  // namespace

TEST(Options, RunHasEveryGroupWithTheBuiltInDefaults) {
  const DriverOptions o = run_options();
  ASSERT_TRUE(o.model && o.engine && o.dist && o.output && o.prompts && o.residuals && o.directions &&
              o.evaluation && o.sweep);
  EXPECT_EQ(o.model->model, "m");
  EXPECT_EQ(o.model->chat_template, "auto");
  EXPECT_EQ(o.model->response_prefix, "auto");
  EXPECT_EQ(o.engine->batch_tokens, 4096);  // auto
  EXPECT_EQ(o.engine->max_seqs, 256);
  EXPECT_EQ(o.engine->threads, 0);
  EXPECT_EQ(o.dist->sharding, abl::parallel::Sharding::automatic);
  EXPECT_EQ(o.dist->hang_timeout, 1800);
  EXPECT_EQ(o.output->out, "o");
  EXPECT_FALSE(o.output->redo);
  EXPECT_EQ(o.prompts->good.source.path, "g.txt");
  EXPECT_EQ(o.prompts->good.source.split, "[:400]");
  EXPECT_EQ(o.prompts->bad.split_option, "bad-split");
  EXPECT_EQ(o.residuals->winsorize_quantile, 1.0);
  EXPECT_TRUE(o.residuals->full_residuals);
  EXPECT_TRUE(o.directions->projected);
  EXPECT_EQ(o.evaluation->max_response_length, 100);
  EXPECT_FALSE(o.evaluation->max_response_length_given);
  EXPECT_EQ(o.evaluation->refusal_markers, "builtin");
  EXPECT_EQ(o.sweep->search, "tpe");
  EXPECT_EQ(o.sweep->trials, 200);
  EXPECT_EQ(o.sweep->startup_trials, 60);
  EXPECT_EQ(o.sweep->per_batch, 0);  // auto
  EXPECT_EQ(o.sweep->seed, 1u);
  EXPECT_EQ(o.sweep->row_norm, abl::engine::RowNorm::full);
  EXPECT_TRUE(o.sweep->early_exit);
  EXPECT_TRUE(o.sweep->slice.empty());
}

TEST(Options, EvaluationSetsFallBackToTheDirectionFilesButKeepTheirOptionNames) {
  const DriverOptions o = run_options({"--column", "prompt"});
  EXPECT_EQ(o.evaluation->kl.source.path, "g.txt");
  EXPECT_EQ(o.evaluation->kl.source.split, "[400:500]");
  EXPECT_EQ(o.evaluation->kl.source.column, "prompt");
  EXPECT_EQ(o.evaluation->kl.file_option, "kl-prompts");
  EXPECT_EQ(o.evaluation->eval.source.path, "b.txt");
  EXPECT_EQ(o.evaluation->eval.split_option, "eval-split");
  const DriverOptions given = run_options({"--kl-prompts", "kl.jsonl", "--eval-split", "[:7]"});
  EXPECT_EQ(given.evaluation->kl.source.path, "kl.jsonl");
  EXPECT_EQ(given.evaluation->eval.source.path, "b.txt");
  EXPECT_EQ(given.evaluation->eval.source.split, "[:7]");
}

TEST(Options, GivenValuesReachTheirStructs) {
  const DriverOptions o = run_options({"--batch-tokens", "512", "--max-seqs", "8", "--threads", "1", "--backend", "cpu",
                                       "--sharding", "FULL_SHARD", "--shard-group-size", "2", "--hang-timeout", "0",
                                       "--offload-params", "--comm", "mpi", "--winsorize-quantile", "0.99",
                                       "--no-full-residuals", "--projected", "false", "--max-response-length", "40",
                                       "--search", "sobol", "--trials", "12", "--trials-per-batch", "4", "--seed", "7",
                                       "--row-normalization", "pre", "--early-exit", "false", "--store-responses",
                                       "--restart", "--slice", "1/3", "--redo", "--response-prefix", "Sure"});
  EXPECT_EQ(o.engine->batch_tokens, 512);
  EXPECT_EQ(o.engine->max_seqs, 8);
  EXPECT_EQ(o.engine->threads, 1);
  EXPECT_EQ(o.engine->backend, "cpu");
  EXPECT_EQ(o.dist->sharding, abl::parallel::Sharding::full_shard);
  EXPECT_EQ(o.dist->shard_group_size, 2);
  EXPECT_EQ(o.dist->hang_timeout, 0);
  EXPECT_TRUE(o.dist->offload_params);
  EXPECT_EQ(o.dist->comm, "mpi");
  EXPECT_EQ(o.residuals->winsorize_quantile, 0.99);
  EXPECT_FALSE(o.residuals->full_residuals);
  EXPECT_FALSE(o.directions->projected);
  EXPECT_EQ(o.evaluation->max_response_length, 40);
  EXPECT_TRUE(o.evaluation->max_response_length_given);
  EXPECT_EQ(o.sweep->search, "sobol");
  EXPECT_EQ(o.sweep->trials, 12);
  EXPECT_EQ(o.sweep->per_batch, 4);
  EXPECT_EQ(o.sweep->seed, 7u);
  EXPECT_EQ(o.sweep->row_norm, abl::engine::RowNorm::pre);
  EXPECT_FALSE(o.sweep->early_exit);
  EXPECT_TRUE(o.sweep->store_responses);
  EXPECT_TRUE(o.sweep->restart);
  EXPECT_EQ(o.sweep->slice, "1/3");
  EXPECT_EQ(o.sweep->slice_i, 1);
  EXPECT_EQ(o.sweep->slice_n, 3);
  EXPECT_TRUE(o.output->redo);
  EXPECT_EQ(o.model->response_prefix, "Sure");
}

TEST(Options, BadValuesFailWithTheirMessages) {
  EXPECT_EQ(run_error({"--winsorize-quantile", "0"}), "--winsorize-quantile must be in (0, 1], got 0");
  EXPECT_EQ(run_error({"--winsorize-quantile", "nan"}), "--winsorize-quantile must be in (0, 1], got nan");
  EXPECT_EQ(run_error({"--max-response-length", "0"}), "--max-response-length must be positive, got 0");
  EXPECT_EQ(run_error({"--seed", "-1"}), "--seed must be >= 0, got -1");
  EXPECT_EQ(run_error({"--trials", "-2"}), "--trials must be >= 0, got -2");
  EXPECT_EQ(run_error({"--startup-trials", "-1"}), "--startup-trials must be >= 0, got -1");
  EXPECT_EQ(run_error({"--search", "random"}), "--search must be tpe, sobol or grid, got 'random'");
  EXPECT_EQ(run_error({"--search", "grid"}), "--search grid needs --grid FILE (see inputs/grids/)");
  EXPECT_EQ(run_error({"--grid", "g.grid"}), "--grid is only used with --search grid");
  EXPECT_EQ(run_error({"--trials-per-batch", "3abc"}),
            "--trials-per-batch must be 'auto' or a positive number, got '3abc'");
  EXPECT_EQ(run_error({"--trials-per-batch", "0"}), "--trials-per-batch must be 'auto' or a positive number, got '0'");
  EXPECT_EQ(run_error({"--search", "sobol", "--slice", "3/3"}), "--slice must be I/N with 0 <= I < N, got '3/3'");
  EXPECT_EQ(run_error({"--search", "sobol", "--slice", "1-3"}), "--slice must be I/N with 0 <= I < N, got '1-3'");
  EXPECT_EQ(run_error({"--slice", "0/2"}),
            "--slice needs --search sobol or grid: TPE proposes each batch from the previous ones");
  EXPECT_NE(run_error({"--row-normalization", "half"}), "");
  EXPECT_EQ(run_error({"--batch-tokens", "lots"}), "--batch-tokens must be 'auto' or a number, got 'lots'");
  EXPECT_EQ(run_error({"--batch-tokens", "-5"}), "--batch-tokens must be positive, got -5");
  EXPECT_EQ(run_error({"--max-seqs", "0"}), "--max-seqs must be positive, got 0");
  EXPECT_EQ(run_error({"--threads", "-1"}), "--threads must be 0 (automatic) or positive, got -1");
  EXPECT_EQ(run_error({"--hang-timeout", "-1"}), "--hang-timeout must be a number of seconds >= 0, got -1");
  EXPECT_EQ(run_error({"--shard-group-size", "-1"}), "--shard-group-size must be >= 0, got -1");
  EXPECT_NE(run_error({"--sharding", "SOMETIMES"}), "");
  EXPECT_EQ(run_error({"--search", "grid", "--grid", "g.grid", "--slice", "0/2"}), "");  // grid read later
}

TEST(Options, ACommandGetsOnlyTheGroupsItDeclares) {
  std::unique_ptr<OptionSet> keep;
  const DriverOptions dirs = parse_driver_options(parse("directions", {"--out", "o", "--projected", "false"}, &keep));
  EXPECT_TRUE(dirs.output && dirs.directions);
  EXPECT_FALSE(dirs.model || dirs.engine || dirs.dist || dirs.prompts || dirs.evaluation || dirs.sweep ||
               dirs.residuals);
  EXPECT_FALSE(dirs.directions->projected);
  EXPECT_EQ(error_of([&] { need(dirs.sweep, "[sweep]"); }), "this command has no [sweep] options");

  const DriverOptions sweep = parse_driver_options(parse("sweep", {"--model", "m", "--out", "o"}, &keep));
  EXPECT_TRUE(sweep.model && sweep.evaluation && sweep.sweep && sweep.engine && sweep.dist);
  EXPECT_FALSE(sweep.prompts || sweep.residuals || sweep.directions);
  // Without direction prompts the evaluation sets have no fallback file.
  EXPECT_EQ(sweep.evaluation->kl.source.path, "");
  EXPECT_EQ(sweep.evaluation->kl.source.column, "text");
}

TEST(Options, ModelAndEngineOfTheStandaloneCommands) {
  std::unique_ptr<OptionSet> keep;
  const auto vm = parse("generate",
                        {"--model", "synthetic:tiny", "--prompts", "p.txt", "--chat-template", "chatml",
                         "--system-prompt", "", "--response-prefix", "auto", "--batch-tokens", "auto"},
                        &keep);
  const ModelOptions m = parse_model_options(vm);
  EXPECT_EQ(m.model, "synthetic:tiny");
  EXPECT_EQ(m.chat_template, "chatml");
  EXPECT_EQ(m.system_prompt, "");
  EXPECT_EQ(fixed_response_prefix(m), "");
  const abl::io::PromptSource src = parse_prompt_options(vm);
  EXPECT_EQ(src.path, "p.txt");
  EXPECT_EQ(src.column, "text");
  EXPECT_EQ(parse_engine_options(vm).batch_tokens, 4096);
  // --model alone (info): the other [model] options keep their defaults.
  const ModelOptions only = parse_model_options(parse("info", {"--model", "dir"}, &keep));
  EXPECT_EQ(only.model, "dir");
  EXPECT_EQ(only.chat_template, "auto");
  EXPECT_EQ(only.response_prefix, "auto");
  ModelOptions given;
  given.response_prefix = "<think></think>";
  EXPECT_EQ(fixed_response_prefix(given), "<think></think>");
}

TEST(Options, LogOptions) {
  std::unique_ptr<OptionSet> keep;
  const LogOptions d = parse_log_options(parse("info", {"--model", "m"}, &keep));
  EXPECT_EQ(d.level, "info");
  EXPECT_FALSE(d.all_ranks || d.quiet);
  const LogOptions g = parse_log_options(parse("info", {"--model", "m", "--log-level", "debug", "--log-all-ranks", "-q"}, &keep));
  EXPECT_EQ(g.level, "debug");
  EXPECT_TRUE(g.all_ranks && g.quiet);
}
