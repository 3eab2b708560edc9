// `abliterate plan`: the per-rank memory table, the batch that fits and the gather traffic for a
// model × topology × sharding strategy, from config.json or a synthetic preset alone — no
// weights, no GPU, no MPI — so a Slurm job can be sized before it is submitted.
#include <iostream>

#include "abl/app/backend.h"
#include "abl/app/commands.h"
#include "abl/app/model_options.h"
#include "abl/core/error.h"
#include "abl/parallel/memory_plan.h"
#include "abl/parallel/topology.h"
#include "abl/model/model_spec.h"
#include "abl/model/weights.h"

namespace abl::app {
namespace {

// NCCL all-gather bus bandwidth per GPU (notes/performance.md): NVLink4 inside an H100/H200
// node, one 400G NIC per GPU across nodes. Only for the time estimate; nothing depends on it.
constexpr double kNvlinkBusBytesPerS = 360e9;
constexpr double kNetworkBusBytesPerS = 46e9;

std::string human_count(int64_t n) {
  if (n >= 1'000'000'000) return fmt::format("{:.2f} B", static_cast<double>(n) / 1e9);
  if (n >= 1'000'000) return fmt::format("{:.2f} M", static_cast<double>(n) / 1e6);
  if (n >= 1'000) return fmt::format("{:.1f} K", static_cast<double>(n) / 1e3);
  return std::to_string(n);
}

int positive_int(int v, const char* name) {
  ABL_CHECK(v >= 1, "--{} must be at least 1, got {}", name, v);
  return v;
}

int64_t parse_batch_tokens(const std::string& s) {
  if (s == "auto" || s == "0") return 0;
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  ABL_CHECK(used == s.size() && v > 0, "--batch-tokens must be 'auto' or a positive number, got '{}'", s);
  return v;
}

void print_gathers(const parallel::MemoryPlan& m) {
  const parallel::Topology& t = m.topology;
  if (t.shard_group_size == 1) {
    std::cout << "gathers:     none (NO_SHARD: every rank holds all weights)\n";
    return;
  }
  const bool in_node = t.shard_group_size <= t.ranks_per_node;
  const double bw = in_node ? kNvlinkBusBytesPerS : kNetworkBusBytesPerS;
  const double seconds = static_cast<double>(m.gathered_bytes_per_pass) / bw;
  std::cout << fmt::format(
      "gathers:     {} received per rank per forward pass\n"
      "             ((G-1)/G of {} layer units, the embedding{} and the head; G = {})\n",
      parallel::format_bytes(m.gathered_bytes_per_pass), m.spec.num_layers,
      m.spec.tied_embeddings ? " twice (tied head)" : "", t.shard_group_size);
  if (m.options.backend == engine::BackendKind::cuda) {
    std::cout << fmt::format(
        "             ~{:.0f} ms per pass at {:.0f} GB/s all-gather bus bandwidth ({});\n"
        "             a decode step is a pass too: {} tokens share that gather\n",
        seconds * 1e3, bw / 1e9, in_node ? "NVLink, group inside a node" : "network, group spans nodes",
        m.batch_seqs);
  }
}

// The options of `plan` (its own [dist] and [engine] meanings: a planned job, not this one),
// parsed and checked once.
struct PlanCommandOptions {
  std::string model;
  parallel::PlanOptions plan;    // backend, memory, lengths, batch
  parallel::TopologyRequest topology;  // nodes x GPUs per node, sharding
};

PlanCommandOptions parse_plan_options(const po::variables_map& vm) {
  PlanCommandOptions o;
  o.model = parse_model_options(vm).model;
  parallel::PlanOptions& opts = o.plan;
  opts.backend = parallel::parse_backend(vm["backend"].as<std::string>());
  // The table lists what the engine that will run allocates (its own plan).
  opts.engine = engine_footprint(opts.backend);
  opts.budget_gib = vm["gpu-mem-gib"].as<double>();
  opts.prompt_tokens = vm["prompt-tokens"].as<int64_t>();
  opts.max_new_tokens = vm["max-new-tokens"].as<int64_t>();
  opts.batch_tokens = parse_batch_tokens(vm["batch-tokens"].as<std::string>());
  opts.max_seqs = vm["max-seqs"].as<int64_t>();

  const int nodes = positive_int(vm["nodes"].as<int>(), "nodes");
  const int per_node = positive_int(vm["gpus-per-node"].as<int>(), "gpus-per-node");
  parallel::TopologyRequest& req = o.topology;
  req.world_size = nodes * per_node;
  req.world_rank = 0;
  req.ranks_per_node = per_node;
  req.node_size = per_node;
  req.sharding = parallel::parse_sharding(vm["sharding"].as<std::string>());
  req.shard_group_size = vm["shard-group-size"].as<int>();
  return o;
}

int run_plan(const PlanCommandOptions& cmd) {
  const std::string& model = cmd.model;
  const model::ModelSpec spec =
      is_synthetic(model) ? model::synthetic_model_spec(model) : model::load_model_spec(model);
  const parallel::PlanOptions& opts = cmd.plan;
  const parallel::TopologyRequest& req = cmd.topology;

  const parallel::MemoryPlan m = parallel::plan_memory(spec, req, opts);
  const parallel::Topology& t = m.topology;
  const parallel::ShardUnits u = parallel::shard_units(spec);
  const DType wt = m.precision.weights;

  std::cout << "model:       " << model << "\n"
            << "             " << model::describe(spec) << "\n"
            << fmt::format("parameters:  {} ({}), {} as {}\n", human_count(model::parameter_count(spec)),
                           model::parameter_count(spec),
                           parallel::format_bytes(static_cast<int64_t>(model::weight_bytes(spec, wt))),
                           dtype_name(wt))
            << fmt::format("units:       layer {} params, embedding {}, head {}{}\n",
                           human_count(u.layer), human_count(u.embed), human_count(u.head),
                           u.tied ? " (final norm only: lm_head tied to the embedding)" : "")
            << fmt::format("topology:    {} node{} x {} GPU{} = {} rank{}, {} backend, {:g} GiB per rank\n",
                           t.num_nodes, t.num_nodes == 1 ? "" : "s", t.ranks_per_node,
                           t.ranks_per_node == 1 ? "" : "s", t.world_size, t.world_size == 1 ? "" : "s",
                           engine::backend_kind_name(opts.backend), opts.budget_gib);
  std::string groups =
      t.shard_group_size == 1
          ? fmt::format("every rank holds all weights ({} replicas)", t.num_shard_groups)
          : fmt::format("{} shard group{} of {} ranks ({} replica{} of the weights)", t.num_shard_groups,
                        t.num_shard_groups == 1 ? "" : "s", t.shard_group_size, t.num_shard_groups,
                        t.num_shard_groups == 1 ? "" : "s");
  std::cout << fmt::format("sharding:    {}: {}\n", parallel::sharding_name(t.sharding), groups);
  if (m.requested == parallel::Sharding::automatic) {
    std::cout << fmt::format(
        "             auto: all weights + working memory for {} on one rank need {} of {}:\n"
        "             {}\n",
        m.options.min_seqs == 1 ? std::string("1 sequence") : fmt::format("{} sequences", m.options.min_seqs),
        parallel::format_bytes(m.one_rank_bytes), parallel::format_bytes(m.budget_bytes),
        m.fits_one_rank ? "they fit, so replicate (NO_SHARD)" : "too big, so shard within the node (HYBRID_SHARD)");
  }
  std::cout << "\nper-rank memory (B = " << m.batch_seqs << ", T = " << m.batch_tokens
            << ", P + N = " << opts.prompt_tokens << " + " << opts.max_new_tokens << "):\n"
            << m.table();
  if (!opts.engine.pass_buffers) {
    std::cout << "             (the engine's buffers are estimated: this binary has no CUDA engine)\n";
  }
  std::cout << "\n";
  if (!m.fits) {
    std::cout << "DOES NOT FIT: " << m.problem << "\n"
              << "advice:      " << m.advice << "\n";
    return 1;
  }
  std::cout << fmt::format(
      "batch:       {} sequences per rank ({} tokens each in the KV cache), {} tokens per pass\n"
      "             {}\n",
      m.batch_seqs, m.tokens_per_seq, m.batch_tokens,
      opts.batch_tokens == 0 ? "(--batch-tokens auto: the largest batch that fits)"
                             : "(the most sequences that fit with --batch-tokens as given)");
  if (opts.max_seqs > 0 && m.batch_seqs == opts.max_seqs) {
    std::cout << fmt::format("             capped by --max-seqs {}; {} still free\n", opts.max_seqs,
                             parallel::format_bytes(m.free_bytes()));
  }
  std::cout << fmt::format("job:         {} sequences x {} rank{} = {} sequences concurrently\n",
                           m.batch_seqs, t.world_size, t.world_size == 1 ? "" : "s",
                           m.concurrent_seqs());
  print_gathers(m);
  return 0;
}

}  // namespace

Command plan_command() {
  Command c;
  c.name = "plan";
  c.summary = "per-rank memory plan and batch size for a model x topology x sharding (no weights read)";
  c.usage =
      "--model DIR|synthetic:PRESET --nodes N --gpus-per-node G --sharding S [--gpu-mem-gib M] "
      "[--shard-group-size K] [--backend cuda|cpu] [--max-new-tokens N] [--prompt-tokens P]";
  c.declare = [](OptionSet& o) {
    declare_model_path_option(o);
    o.group("dist", "Topology")
        ("nodes", po::value<int>()->default_value(1), "nodes in the job")
        ("gpus-per-node", po::value<int>()->default_value(1), "ranks (one GPU each) per node")
        ("sharding", po::value<std::string>()->default_value("auto"),
         "FULL_SHARD, HYBRID_SHARD, NO_SHARD or auto (NO_SHARD when the weights fit one rank, "
         "else HYBRID_SHARD); PyTorch's SHARD_GRAD_OP and _HYBRID_SHARD_ZERO2 are accepted")
        ("shard-group-size", po::value<int>()->default_value(0),
         "ranks per shard group (0: from the strategy); must divide the world and divide, or be "
         "a multiple of, the GPUs per node")
        ("gpu-mem-gib", po::value<double>()->default_value(80.0),
         "memory per rank in GiB (80 for H100-80GB; with --backend cpu: host memory per rank)");
    o.group("engine", "Engine")
        ("backend", po::value<std::string>()->default_value("cuda"),
         "cuda (bf16 weights and activations, fp32 residual and logits), cpu (fp32 everything), or auto "
         "(cuda: the nodes of the plan have GPUs)")
        ("batch-tokens", po::value<std::string>()->default_value("auto"),
         "tokens per forward pass, or auto: the largest batch that fits")
        ("max-seqs", po::value<int64_t>()->default_value(0),
         "at most this many sequences per rank (0: as many as fit)");
    o.group("generate", "Generation")
        ("max-new-tokens", po::value<int64_t>()->default_value(100), "tokens generated per prompt at most");
    o.group("plan", "Plan")
        ("prompt-tokens", po::value<int64_t>()->default_value(256),
         "tokens of the longest rendered prompt (chat template included)");
  };
  c.run = [](const po::variables_map& vm) { return run_plan(parse_plan_options(vm)); };
  return c;
}

}  // namespace abl::app
