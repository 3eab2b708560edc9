// The layout of a job: world = nodes × ranks per node; shard groups (the ranks that together hold
// one copy of the weights) and replica groups (ranks with the same position in every shard
// group). A pure function of a few numbers, validated in one place before any work starts, so
// every layout can be unit-tested without MPI.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace abl::parallel {

// FSDP vocabulary. auto: NO_SHARD when the weights plus working memory fit one rank's budget,
// else HYBRID_SHARD.
enum class Sharding { full_shard, hybrid_shard, no_shard, automatic };
// "FULL_SHARD", "HYBRID_SHARD", "NO_SHARD", "auto" (case-insensitive; also PyTorch's
// "SHARD_GRAD_OP" -> full_shard semantics for weights); errors name the value.
Sharding parse_sharding(std::string_view name);
std::string_view sharding_name(Sharding s);

struct TopologyRequest {
  int world_size = 1;
  int world_rank = 0;
  int ranks_per_node = 0;     // 0: take node_size (from MPI_COMM_TYPE_SHARED)
  int node_size = 1;          // ranks MPI found on this rank's node
  Sharding sharding = Sharding::hybrid_shard;
  int shard_group_size = 0;   // 0: from the strategy
  bool fits_one_rank = true;  // for Sharding::automatic
};

struct Topology {
  int world_size = 1, world_rank = 0;
  int num_nodes = 1, ranks_per_node = 1, node = 0, local_rank = 0;
  Sharding sharding = Sharding::no_shard;  // resolved (never automatic)
  int shard_group_size = 1;   // G
  int num_shard_groups = 1;   // world / G = replicas of the weights
  int shard_group = 0;        // which copy this rank belongs to
  int shard_rank = 0;         // position inside its shard group (= its replica group index)
  std::string describe() const;  // one line for logs
};

// Validates and resolves; on failure throws abl::Error that lists every factor (world size,
// nodes, ranks per node, group size, strategy) and what does not divide what.
Topology make_topology(const TopologyRequest& req);

}  // namespace abl::parallel
