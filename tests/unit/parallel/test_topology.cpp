// Topology: every strategy over many layouts (1 to 32 ranks, real and virtual nodes), the FSDP
// names, explicit shard group sizes, and bad layouts whose error lists every factor once.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "abl/core/error.h"
#include "abl/parallel/topology.h"

using namespace abl::parallel;

namespace {

std::string topology_error(const TopologyRequest& req) {
  try {
    make_topology(req);
  } catch (const abl::Error& e) {
    return e.what();
  }
  return "";
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TopologyRequest request(int world, int rank, int rpn, Sharding s, int group = 0) {
  TopologyRequest r;
  r.world_size = world;
  r.world_rank = rank;
  r.ranks_per_node = rpn;
  r.node_size = 1;  // ignored while ranks_per_node (virtual nodes) is set
  r.sharding = s;
  r.shard_group_size = group;
  return r;
}

// Checks the invariants of one whole layout (all ranks) and returns rank → topology.
std::vector<Topology> layout(int world, int rpn, Sharding s, int group = 0, bool fits = true) {
  std::vector<Topology> all;
  for (int r = 0; r < world; ++r) {
    TopologyRequest req = request(world, r, rpn, s, group);
    req.fits_one_rank = fits;
    all.push_back(make_topology(req));
  }
  return all;
}

}  // namespace

TEST(Topology, ParsesFsdpNames) {
  EXPECT_EQ(parse_sharding("FULL_SHARD"), Sharding::full_shard);
  EXPECT_EQ(parse_sharding("full_shard"), Sharding::full_shard);
  EXPECT_EQ(parse_sharding("Full-Shard"), Sharding::full_shard);
  EXPECT_EQ(parse_sharding("ShardingStrategy.FULL_SHARD"), Sharding::full_shard);
  EXPECT_EQ(parse_sharding("SHARD_GRAD_OP"), Sharding::full_shard);
  EXPECT_EQ(parse_sharding("HYBRID_SHARD"), Sharding::hybrid_shard);
  EXPECT_EQ(parse_sharding("hybrid_shard"), Sharding::hybrid_shard);
  EXPECT_EQ(parse_sharding("_HYBRID_SHARD_ZERO2"), Sharding::hybrid_shard);
  EXPECT_EQ(parse_sharding("NO_SHARD"), Sharding::no_shard);
  EXPECT_EQ(parse_sharding("no_shard"), Sharding::no_shard);
  EXPECT_EQ(parse_sharding("auto"), Sharding::automatic);
  EXPECT_EQ(parse_sharding("AUTO"), Sharding::automatic);
  // Accelerate's numeric fsdp_sharding_strategy.
  EXPECT_EQ(parse_sharding("1"), Sharding::full_shard);
  EXPECT_EQ(parse_sharding("2"), Sharding::full_shard);
  EXPECT_EQ(parse_sharding("3"), Sharding::no_shard);
  EXPECT_EQ(parse_sharding("4"), Sharding::hybrid_shard);
  EXPECT_EQ(parse_sharding("5"), Sharding::hybrid_shard);

  for (Sharding s : {Sharding::full_shard, Sharding::hybrid_shard, Sharding::no_shard,
                     Sharding::automatic}) {
    EXPECT_EQ(parse_sharding(sharding_name(s)), s) << sharding_name(s);
  }
  try {
    parse_sharding("ZERO3");
    FAIL() << "ZERO3 accepted";
  } catch (const abl::Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'ZERO3'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("FULL_SHARD"), std::string::npos) << msg;
    EXPECT_NE(msg.find("HYBRID_SHARD"), std::string::npos) << msg;
  }
}

TEST(Topology, EveryStrategyOverLayouts) {
  const std::vector<int> worlds = {1, 2, 3, 4, 8, 32};
  for (int world : worlds) {
    // Virtual nodes of 1, 2 and 4 ranks where they divide the world, and one node of all ranks.
    std::set<int> node_sizes = {world};
    for (int v : {1, 2, 4}) {
      if (world % v == 0) node_sizes.insert(v);
    }
    for (int rpn : node_sizes) {
      for (Sharding s : {Sharding::full_shard, Sharding::hybrid_shard, Sharding::no_shard}) {
        SCOPED_TRACE(testing::Message() << "world " << world << " rpn " << rpn << " "
                                        << sharding_name(s));
        const int G = s == Sharding::full_shard ? world : s == Sharding::hybrid_shard ? rpn : 1;
        const std::vector<Topology> all = layout(world, rpn, s);
        std::map<int, std::vector<int>> groups;       // shard group -> world ranks
        std::map<int, std::vector<int>> replicas;     // shard rank -> world ranks
        std::map<int, std::vector<int>> nodes;        // node -> world ranks
        for (int r = 0; r < world; ++r) {
          const Topology& t = all[static_cast<size_t>(r)];
          EXPECT_EQ(t.world_size, world);
          EXPECT_EQ(t.world_rank, r);
          EXPECT_EQ(t.num_nodes, world / rpn);
          EXPECT_EQ(t.ranks_per_node, rpn);
          EXPECT_EQ(t.node, r / rpn);
          EXPECT_EQ(t.local_rank, r % rpn);
          EXPECT_EQ(t.sharding, s);
          EXPECT_EQ(t.shard_group_size, G);
          EXPECT_EQ(t.num_shard_groups, world / G);
          EXPECT_EQ(t.shard_group, r / G);
          EXPECT_EQ(t.shard_rank, r % G);
          groups[t.shard_group].push_back(r);
          replicas[t.shard_rank].push_back(r);
          nodes[t.node].push_back(r);
        }
        // Shard groups are blocks of G consecutive ranks; replica groups take one rank of each.
        ASSERT_EQ(static_cast<int>(groups.size()), world / G);
        for (const auto& [g, ranks] : groups) {
          ASSERT_EQ(static_cast<int>(ranks.size()), G);
          for (int i = 0; i < G; ++i) EXPECT_EQ(ranks[static_cast<size_t>(i)], g * G + i);
        }
        ASSERT_EQ(static_cast<int>(replicas.size()), G);
        for (const auto& [j, ranks] : replicas) EXPECT_EQ(static_cast<int>(ranks.size()), world / G);
        // HYBRID_SHARD: a shard group is exactly one node.
        if (s == Sharding::hybrid_shard) {
          EXPECT_EQ(groups, nodes);
        }
        // Exactly one rank 0 per shard group (the root that makes the NCCL id).
        int roots = 0;
        for (const Topology& t : all) roots += t.shard_rank == 0;
        EXPECT_EQ(roots, world / G);
      }
    }
  }
}

TEST(Topology, NodeSizeFromMpiWhenNoVirtualNodes) {
  TopologyRequest r = request(16, 11, 0, Sharding::hybrid_shard);
  r.node_size = 8;
  const Topology t = make_topology(r);
  EXPECT_EQ(t.num_nodes, 2);
  EXPECT_EQ(t.ranks_per_node, 8);
  EXPECT_EQ(t.node, 1);
  EXPECT_EQ(t.local_rank, 3);
  EXPECT_EQ(t.shard_group_size, 8);
  EXPECT_EQ(t.shard_group, 1);
  EXPECT_EQ(t.shard_rank, 3);

  r.ranks_per_node = 4;  // the virtual-node override wins over what MPI found
  const Topology v = make_topology(r);
  EXPECT_EQ(v.num_nodes, 4);
  EXPECT_EQ(v.node, 2);
  EXPECT_EQ(v.local_rank, 3);
  EXPECT_EQ(v.shard_group_size, 4);
}

TEST(Topology, AutomaticFollowsFitsOneRank) {
  for (int rpn : {1, 2, 4, 8}) {
    const std::vector<Topology> fits = layout(8, rpn, Sharding::automatic, 0, true);
    const std::vector<Topology> big = layout(8, rpn, Sharding::automatic, 0, false);
    for (int r = 0; r < 8; ++r) {
      EXPECT_EQ(fits[static_cast<size_t>(r)].sharding, Sharding::no_shard);
      EXPECT_EQ(fits[static_cast<size_t>(r)].shard_group_size, 1);
      EXPECT_EQ(big[static_cast<size_t>(r)].sharding, Sharding::hybrid_shard);
      EXPECT_EQ(big[static_cast<size_t>(r)].shard_group_size, rpn);
    }
  }
  // fits_one_rank matters only for auto.
  TopologyRequest r = request(8, 0, 8, Sharding::full_shard);
  r.fits_one_rank = true;
  EXPECT_EQ(make_topology(r).shard_group_size, 8);
  // auto with an explicit group size shards in groups of that size.
  r = request(8, 5, 4, Sharding::automatic, 2);
  r.fits_one_rank = true;
  Topology t = make_topology(r);
  EXPECT_EQ(t.sharding, Sharding::hybrid_shard);
  EXPECT_EQ(t.shard_group_size, 2);
  EXPECT_EQ(t.shard_group, 2);
  EXPECT_EQ(t.shard_rank, 1);
}

TEST(Topology, ExplicitShardGroupSize) {
  // 4 nodes x 8: groups of 4 (inside a node), 16 (two nodes), 32 (everything).
  for (int G : {1, 2, 4, 8, 16, 32}) {
    for (Sharding s : {Sharding::full_shard, Sharding::hybrid_shard}) {
      SCOPED_TRACE(testing::Message() << "G " << G << " " << sharding_name(s));
      const std::vector<Topology> all = layout(32, 8, s, G);
      for (int r = 0; r < 32; ++r) {
        const Topology& t = all[static_cast<size_t>(r)];
        EXPECT_EQ(t.shard_group_size, G);
        EXPECT_EQ(t.num_shard_groups, 32 / G);
        EXPECT_EQ(t.shard_group, r / G);
        EXPECT_EQ(t.shard_rank, r % G);
        EXPECT_EQ(t.node, r / 8);
      }
    }
  }
  EXPECT_EQ(layout(4, 2, Sharding::no_shard, 1)[3].shard_group_size, 1);
}

TEST(Topology, BadLayoutsListEveryFactor) {
  struct Case {
    TopologyRequest req;
    std::string fails;  // a phrase of the reason
  };
  std::vector<Case> cases = {
      {request(12, 0, 8, Sharding::hybrid_shard), "does not divide the world size 12"},
      {request(6, 0, 4, Sharding::full_shard), "nodes must all have the same number of ranks"},
      {request(8, 0, 4, Sharding::hybrid_shard, 3), "shard group size 3 does not divide the world size 8"},
      {request(24, 0, 4, Sharding::hybrid_shard, 6), "neither divides the ranks per node 4 nor is a multiple"},
      {request(8, 0, 4, Sharding::no_shard, 2), "NO_SHARD keeps all weights"},
      {request(8, 8, 4, Sharding::full_shard), "world rank 8 is outside [0, 8)"},
      {request(8, 0, 4, Sharding::full_shard, -2), "must be positive"},
      {request(0, 0, 1, Sharding::full_shard), "world size must be at least 1"},
  };
  for (const Case& c : cases) {
    const std::string msg = topology_error(c.req);
    ASSERT_FALSE(msg.empty()) << "accepted: " << c.fails;
    EXPECT_NE(msg.find(c.fails), std::string::npos) << msg;
    const std::string head = msg.substr(0, msg.find('\n'));
    for (const char* factor : {"world size ", "ranks per node ", "number of nodes ", "strategy ",
                               "shard group size "}) {
      EXPECT_EQ(count(head, factor), 1u) << factor << " in: " << head;
    }
  }
  // Several problems at once are all listed.
  const std::string both = topology_error(request(12, 0, 8, Sharding::hybrid_shard, 5));
  EXPECT_NE(both.find("ranks per node 8 does not divide"), std::string::npos) << both;
  EXPECT_NE(both.find("shard group size 5 does not divide"), std::string::npos) << both;
  EXPECT_NE(both.find("12/8 (not a whole number)"), std::string::npos) << both;

  // Without virtual nodes the node size MPI found is the one checked.
  TopologyRequest mpi = request(10, 0, 0, Sharding::hybrid_shard);
  mpi.node_size = 4;
  EXPECT_NE(topology_error(mpi).find("ranks per node 4 does not divide the world size 10"),
            std::string::npos);
}

TEST(Topology, Describe) {
  const Topology t = make_topology(request(32, 9, 8, Sharding::hybrid_shard));
  const std::string d = t.describe();
  EXPECT_NE(d.find("4 nodes x 8 ranks = 32 ranks"), std::string::npos) << d;
  EXPECT_NE(d.find("HYBRID_SHARD"), std::string::npos) << d;
  EXPECT_NE(d.find("4 shard groups of 8 ranks"), std::string::npos) << d;
  EXPECT_NE(d.find("rank 9 = node 1 local 1"), std::string::npos) << d;
  const std::string n = make_topology(request(2, 0, 1, Sharding::no_shard)).describe();
  EXPECT_NE(n.find("every rank holds all weights"), std::string::npos) << n;
}
