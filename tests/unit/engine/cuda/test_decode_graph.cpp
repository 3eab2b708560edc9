// Decode-step graphs: the host-side bucket and padding rules (no device needed).
#include <gtest/gtest.h>

#include <set>

#include "abl/engine/cuda/decode_graph.h"
#include "abl/core/error.h"

using namespace abl;

TEST(DecodeGraphHost, BucketsRoundUpWithinTheLimit) {
  EXPECT_EQ(cuda::decode_bucket(1, 256), 8);
  EXPECT_EQ(cuda::decode_bucket(8, 256), 8);
  EXPECT_EQ(cuda::decode_bucket(9, 256), 16);
  EXPECT_EQ(cuda::decode_bucket(64, 256), 64);
  EXPECT_EQ(cuda::decode_bucket(65, 256), 96);
  EXPECT_EQ(cuda::decode_bucket(250, 256), 256);
  EXPECT_EQ(cuda::decode_bucket(513, 1024), 640);
  EXPECT_EQ(cuda::decode_bucket(5, 6), 6);  // never above max_seqs
  EXPECT_THROW(cuda::decode_bucket(0, 8), Error);
  EXPECT_THROW(cuda::decode_bucket(9, 8), Error);
  // Every B maps to a bucket ≥ B, and the buckets are few.
  std::set<int64_t> buckets;
  for (int64_t B = 1; B <= 1024; ++B) {
    const int64_t b = cuda::decode_bucket(B, 1024);
    EXPECT_GE(b, B);
    buckets.insert(b);
  }
  EXPECT_LE(buckets.size(), 8u + 14u + 4u);
}

TEST(DecodeGraphHost, KvBucketsArePowersOfTwoUnderTheLimit) {
  EXPECT_EQ(cuda::kv_bucket(1, 4096), 256);
  EXPECT_EQ(cuda::kv_bucket(256, 4096), 256);
  EXPECT_EQ(cuda::kv_bucket(257, 4096), 512);
  EXPECT_EQ(cuda::kv_bucket(3000, 4096), 4096);
  EXPECT_EQ(cuda::kv_bucket(3000, 3500), 3500);
  EXPECT_EQ(cuda::kv_bucket(100, 128), 128);
}

TEST(DecodeGraphHost, PaddingAddsDummySequencesOnTheScratchRow) {
  engine::Batch b;
  const int32_t a = 5, c = 7;
  b.add(&a, 1, 0, 10, 2);
  b.add(&c, 1, 40, 3, -1);
  ASSERT_TRUE(cuda::is_decode_step(b));
  const engine::Batch p = cuda::pad_decode_step(b, 8, 99, 256);
  ASSERT_EQ(p.num_seqs(), 8);
  ASSERT_EQ(p.num_tokens(), 8);
  EXPECT_TRUE(cuda::is_decode_step(p));
  for (int64_t s = 0; s < 2; ++s) {
    EXPECT_EQ(p.seqs[static_cast<size_t>(s)].kv_begin, b.seqs[static_cast<size_t>(s)].kv_begin);
    EXPECT_EQ(p.trial[static_cast<size_t>(s)], b.trial[static_cast<size_t>(s)]);
    EXPECT_EQ(p.tokens[static_cast<size_t>(s)], b.tokens[static_cast<size_t>(s)]);
    EXPECT_EQ(p.state_slots[static_cast<size_t>(s)], s);
  }
  for (size_t s = 2; s < 8; ++s) {
    EXPECT_EQ(p.tokens[s], 0);
    EXPECT_EQ(p.positions[s], 0);
    EXPECT_EQ(p.cache_rows[s], 99);
    EXPECT_EQ(p.state_slots[s], 256);  // the recurrent states' scratch slot
    EXPECT_EQ(p.seqs[s].kv_begin, 99);
    EXPECT_EQ(p.seqs[s].kv_len, 1);
    EXPECT_EQ(p.seqs[s].q_begin, static_cast<int64_t>(s));
    EXPECT_EQ(p.trial[s], -1);
    EXPECT_EQ(p.last_row(static_cast<int64_t>(s)), static_cast<int64_t>(s));
  }
  // A prefill sequence is not a decode step; an empty batch is none either.
  engine::Batch q = b;
  const int32_t two[2] = {1, 2};
  q.add(two, 2, 60, 0);
  EXPECT_FALSE(cuda::is_decode_step(q));
  EXPECT_FALSE(cuda::is_decode_step(engine::Batch{}));
}

// The first use of a key runs the step eagerly (no capture, so no device is needed here); keys
// beyond the capacity are forgotten least recently used first and warm up again.
TEST(DecodeGraphHost, FirstUseOfAKeyRunsEagerlyAndTheCacheIsBounded) {
  cuda::DecodeGraphs graphs(2);
  int runs = 0;
  const auto step = [&runs] { ++runs; };
  const cuda::DecodeGraphKey k1{8, 256, 1, 0}, k2{16, 256, 1, 0}, k3{8, 512, 1, 0};
  graphs.run(k1, nullptr, step);
  graphs.run(k2, nullptr, step);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(graphs.warmups(), 2);
  EXPECT_EQ(graphs.size(), 2u);
  graphs.run(k3, nullptr, step);  // evicts k1, the least recently used
  EXPECT_EQ(graphs.size(), 2u);
  graphs.run(k1, nullptr, step);  // seen again after eviction: another warm-up, evicts k2
  EXPECT_EQ(graphs.warmups(), 4);
  EXPECT_EQ(graphs.captures(), 0);
  EXPECT_EQ(graphs.replays(), 0);
  EXPECT_EQ(runs, 4);
  // Keys differ in every field.
  EXPECT_TRUE(k1 < k2 || k2 < k1);
  EXPECT_TRUE(cuda::DecodeGraphKey({8, 256, 1, 7}) < cuda::DecodeGraphKey({8, 256, 2, 0}));
  graphs.clear();
  EXPECT_EQ(graphs.size(), 0u);
}
