// Job layout: nodes × ranks per node, shard groups of G consecutive ranks, replicas across them.
// Every check runs before a single collective, and a failure names all the factors at once
// (world, ranks per node, nodes, strategy, group size), so one message is enough to fix a
// Slurm script.
#include "abl/parallel/topology.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <fmt/format.h>

#include "abl/core/error.h"

namespace abl::parallel {
namespace {

std::string normalized(std::string_view name) {
  std::string s;
  for (char c : name) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    s += c == '-' ? '_' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  // PyTorch prints the enum as "ShardingStrategy.FULL_SHARD"; accept that spelling too.
  const std::string prefix = "shardingstrategy.";
  if (s.rfind(prefix, 0) == 0) s.erase(0, prefix.size());
  return s;
}

// The G a strategy asks for, before any explicit override.
int strategy_group_size(Sharding s, int world, int ranks_per_node) {
  switch (s) {
    case Sharding::full_shard: return world;
    case Sharding::hybrid_shard: return ranks_per_node;
    case Sharding::no_shard: return 1;
    case Sharding::automatic: break;
  }
  return 1;
}

}  // namespace

Sharding parse_sharding(std::string_view name) {
  const std::string s = normalized(name);
  // Accelerate's fsdp_sharding_strategy also takes the enum values 1..5.
  if (s == "full_shard" || s == "1") return Sharding::full_shard;
  // ZeRO-2 keeps parameters gathered between forward and backward; inference has no backward,
  // so for weights it is FULL_SHARD.
  if (s == "shard_grad_op" || s == "2") return Sharding::full_shard;
  if (s == "no_shard" || s == "3") return Sharding::no_shard;
  if (s == "hybrid_shard" || s == "4") return Sharding::hybrid_shard;
  if (s == "_hybrid_shard_zero2" || s == "hybrid_shard_zero2" || s == "5") {
    return Sharding::hybrid_shard;
  }
  if (s == "auto" || s == "automatic") return Sharding::automatic;
  fail("unknown sharding strategy '{}' (expected FULL_SHARD, HYBRID_SHARD, NO_SHARD or auto; "
       "PyTorch's SHARD_GRAD_OP and _HYBRID_SHARD_ZERO2 are accepted as FULL_SHARD and "
       "HYBRID_SHARD)",
       name);
}

std::string_view sharding_name(Sharding s) {
  switch (s) {
    case Sharding::full_shard: return "FULL_SHARD";
    case Sharding::hybrid_shard: return "HYBRID_SHARD";
    case Sharding::no_shard: return "NO_SHARD";
    case Sharding::automatic: return "auto";
  }
  return "?";
}

Topology make_topology(const TopologyRequest& req) {
  const int W = req.world_size;
  const bool virtual_nodes = req.ranks_per_node > 0;
  const int rpn = virtual_nodes ? req.ranks_per_node : req.node_size;

  Sharding resolved = req.sharding;
  if (resolved == Sharding::automatic) {
    // With an explicit group size the user has chosen to shard; auto only picks the label.
    if (req.shard_group_size > 0) {
      resolved = req.shard_group_size == 1 ? Sharding::no_shard : Sharding::hybrid_shard;
    } else {
      resolved = req.fits_one_rank ? Sharding::no_shard : Sharding::hybrid_shard;
    }
  }

  std::vector<std::string> problems;
  if (W < 1) problems.push_back("the world size must be at least 1");
  if (W >= 1 && (req.world_rank < 0 || req.world_rank >= W)) {
    problems.push_back(fmt::format("world rank {} is outside [0, {})", req.world_rank, W));
  }
  if (rpn < 1) {
    problems.push_back(virtual_nodes ? "ranks per node must be at least 1"
                                     : "MPI reported no ranks on this node");
  } else if (W >= 1 && W % rpn != 0) {
    problems.push_back(fmt::format(
        "ranks per node {} does not divide the world size {}: nodes must all have the same "
        "number of ranks",
        rpn, W));
  }
  const bool layout_ok = W >= 1 && rpn >= 1 && W % rpn == 0;
  const int nodes = layout_ok ? W / rpn : 0;

  int G = 0;
  if (req.shard_group_size < 0) {
    problems.push_back(fmt::format("the shard group size must be positive (or 0 for the "
                                   "strategy's), got {}",
                                   req.shard_group_size));
  } else if (req.shard_group_size > 0) {
    G = req.shard_group_size;
    if (req.sharding == Sharding::no_shard && G != 1) {
      problems.push_back(fmt::format(
          "NO_SHARD keeps all weights on every rank, so a shard group size of {} contradicts it "
          "(use HYBRID_SHARD or FULL_SHARD with --shard-group-size, or drop it)",
          G));
    }
    if (W >= 1 && W % G != 0) {
      problems.push_back(fmt::format("shard group size {} does not divide the world size {}", G, W));
    }
    if (rpn >= 1 && rpn % G != 0 && G % rpn != 0) {
      problems.push_back(fmt::format(
          "shard group size {} neither divides the ranks per node {} nor is a multiple of it, so "
          "groups would straddle node boundaries unevenly",
          G, rpn));
    }
  } else if (layout_ok) {
    G = strategy_group_size(resolved, W, rpn);
  }

  if (!problems.empty()) {
    const std::string nodes_text =
        layout_ok ? std::to_string(nodes)
                  : (rpn >= 1 && W >= 1 ? fmt::format("{}/{} (not a whole number)", W, rpn) : "?");
    const std::string group_text =
        req.shard_group_size > 0
            ? fmt::format("{} (--shard-group-size)", req.shard_group_size)
            : (G > 0 ? fmt::format("{} (from the strategy)", G) : std::string("? (from the strategy)"));
    std::string strategy(sharding_name(req.sharding));
    if (req.sharding == Sharding::automatic) {
      strategy += fmt::format(" -> {}", sharding_name(resolved));
    }
    std::string msg = fmt::format(
        "invalid topology: world size {}, ranks per node {}, number of nodes {}, strategy {}, "
        "shard group size {}:",
        W, rpn, nodes_text, strategy, group_text);
    for (const std::string& p : problems) msg += "\n  - " + p;
    throw Error(msg);
  }

  Topology t;
  t.world_size = W;
  t.world_rank = req.world_rank;
  t.num_nodes = nodes;
  t.ranks_per_node = rpn;
  t.node = req.world_rank / rpn;
  t.local_rank = req.world_rank % rpn;
  t.sharding = resolved;
  t.shard_group_size = G;
  t.num_shard_groups = W / G;
  t.shard_group = req.world_rank / G;
  t.shard_rank = req.world_rank % G;
  return t;
}

std::string Topology::describe() const {
  std::string groups;
  if (shard_group_size == 1) {
    groups = fmt::format("every rank holds all weights ({} replicas)", num_shard_groups);
  } else {
    groups = fmt::format("{} shard group{} of {} rank{} ({} replica{} of the weights{})",
                         num_shard_groups, num_shard_groups == 1 ? "" : "s", shard_group_size,
                         shard_group_size == 1 ? "" : "s", num_shard_groups,
                         num_shard_groups == 1 ? "" : "s",
                         shard_group_size > ranks_per_node ? ", groups span nodes" : "");
  }
  return fmt::format(
      "{} node{} x {} rank{} = {} rank{}, {}: {}; rank {} = node {} local {}, shard group {} "
      "rank {}",
      num_nodes, num_nodes == 1 ? "" : "s", ranks_per_node, ranks_per_node == 1 ? "" : "s",
      world_size, world_size == 1 ? "" : "s", sharding_name(sharding), groups, world_rank, node,
      local_rank, shard_group, shard_rank);
}

}  // namespace abl::parallel
