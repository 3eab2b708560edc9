// baseline.h5 written by every rank of the world: uneven KL rows (rank 0 none when there are
// several ranks), refusal rows in batches, then read back serially and checked value by value;
// and the errors that must fail every rank alike (bad rows on one rank, a row never written).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "abl/core/error.h"
#include "abl/io/driver_files.h"
#include "mpi_test_env.h"

namespace abl::testing {
namespace {

using io::schema::BaselineMeta;
using io::schema::BaselineReader;
using io::schema::BaselineWriter;

constexpr int64_t kKl = 7, kRef = 5, kVocab = 9;

float logprob(int64_t row, int64_t t) { return -0.125f * static_cast<float>(row * kVocab + t + 1); }
std::string kl_prompt(int64_t row) { return "kl prompt " + std::to_string(row) + " ¿sí?"; }
std::string ref_prompt(int64_t row) { return "how do I " + std::to_string(row); }
std::string response(int64_t row) {
  return row % 2 ? "I can't help with that 🙂" : std::string(200 + row, 'y');
}
uint8_t verdict(int64_t row) { return row % 2 ? 1 : 0; }

// [first, first + count) of n rows for this rank: later ranks get more, rank 0 none if asked.
std::pair<int64_t, int64_t> my_rows(int64_t n, bool skip_rank0) {
  const int size = world_size(), rank = world_rank();
  std::vector<int64_t> w(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    w[static_cast<size_t>(r)] = (skip_rank0 && size > 1 && r == 0) ? 0 : r + 1;
  }
  int64_t total = 0, first = 0, given = 0;
  for (int64_t x : w) total += x;
  std::vector<int64_t> counts(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) {
    counts[static_cast<size_t>(r)] = n * w[static_cast<size_t>(r)] / total;
    given += counts[static_cast<size_t>(r)];
  }
  counts.back() += n - given;
  for (int r = 0; r < rank; ++r) first += counts[static_cast<size_t>(r)];
  return {first, counts[static_cast<size_t>(rank)]};
}

BaselineMeta meta() {
  BaselineMeta m;
  m.model = "org/model";
  m.architecture = "LlamaForCausalLM";
  m.chat_template = "llama3";
  m.system_prompt = "";
  m.response_prefix = "Sure";
  m.response_prefix_source = "given";
  m.max_response_length = 32;
  m.abliterate_version = "0.1.0-test";
  return m;
}

void write_all(BaselineWriter& w) {
  auto [kf, kn] = my_rows(kKl, true);
  std::vector<float> lp;
  std::vector<std::string> prompts;
  for (int64_t r = kf; r < kf + kn; ++r) {
    for (int64_t t = 0; t < kVocab; ++t) lp.push_back(logprob(r, t));
    prompts.push_back(kl_prompt(r));
  }
  w.write_kl(kf, kn, lp.data(), prompts);

  // Refusals in batches of 2; every rank makes the same number of (collective) calls.
  auto [rf, rn] = my_rows(kRef, false);
  const int64_t batches = (kRef + 1) / 2;  // enough for any rank's share
  for (int64_t b = 0; b < batches; ++b) {
    const int64_t first = rf + 2 * b, n = std::clamp<int64_t>(rf + rn - first, 0, 2);
    std::vector<std::string> p, resp;
    std::vector<uint8_t> v;
    for (int64_t r = first; r < first + n; ++r) {
      p.push_back(ref_prompt(r));
      resp.push_back(response(r));
      v.push_back(verdict(r));
    }
    w.write_refusals(n > 0 ? first : 0, p, resp, v);
  }
}

TEST(BaselineMpi, CollectiveRoundTrip) {
  const std::string path = out_file("baseline.h5");
  {
    BaselineWriter w(path, MPI_COMM_WORLD, meta(), kKl, kRef, kVocab);
    write_all(w);
    w.commit();
  }
  EXPECT_TRUE(std::filesystem::exists(path));
  BaselineReader r(path);
  EXPECT_EQ(r.meta().world_size, world_size());
  EXPECT_EQ(r.meta().response_prefix, "Sure");
  EXPECT_EQ(r.meta().created.size(), 20u);
  ASSERT_EQ(r.n_kl(), kKl);
  ASSERT_EQ(r.n_refusal(), kRef);
  ASSERT_EQ(r.vocab(), kVocab);
  std::vector<float> lp = r.kl_logprobs();
  std::vector<std::string> kp = r.kl_prompts(), rp = r.refusal_prompts(),
                           resp = r.refusal_responses();
  std::vector<uint8_t> v = r.is_refusal();
  int64_t want_refusals = 0;
  for (int64_t row = 0; row < kKl; ++row) {
    EXPECT_EQ(kp[static_cast<size_t>(row)], kl_prompt(row));
    for (int64_t t = 0; t < kVocab; ++t) {
      EXPECT_EQ(lp[static_cast<size_t>(row * kVocab + t)], logprob(row, t)) << row << " " << t;
    }
  }
  for (int64_t row = 0; row < kRef; ++row) {
    EXPECT_EQ(rp[static_cast<size_t>(row)], ref_prompt(row));
    EXPECT_EQ(resp[static_cast<size_t>(row)], response(row));
    EXPECT_EQ(v[static_cast<size_t>(row)], verdict(row));
    want_refusals += verdict(row);
  }
  EXPECT_EQ(r.refusals(), want_refusals);
}

TEST(BaselineMpi, BadRowsOnOneRankFailEveryRank) {
  const std::string path = out_file("baseline_bad_rows.h5");
  BaselineWriter w(path, MPI_COMM_WORLD, meta(), kKl, kRef, kVocab);
  const bool me = world_rank() == world_size() - 1;
  try {
    // The last rank gives two responses for one prompt; the others nothing.
    w.write_refusals(0, me ? std::vector<std::string>{"p"} : std::vector<std::string>{},
                     me ? std::vector<std::string>{"a", "b"} : std::vector<std::string>{},
                     me ? std::vector<uint8_t>{0} : std::vector<uint8_t>{});
    ADD_FAILURE() << "write_refusals() should fail on every rank";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("1 refusal prompts, 2 responses"), std::string::npos) << msg;
  }
}

TEST(BaselineMpi, MissingRowsFailTheCommitOnEveryRank) {
  const std::string path = out_file("baseline_missing.h5");
  BaselineWriter w(path, MPI_COMM_WORLD, meta(), kKl, kRef, kVocab);
  auto [kf, kn] = my_rows(kKl, true);
  const int64_t n = world_rank() == world_size() - 1 ? kn - 1 : kn;  // one row short
  std::vector<float> lp(static_cast<size_t>(std::max<int64_t>(n, 0) * kVocab), -1.0f);
  std::vector<std::string> prompts(static_cast<size_t>(std::max<int64_t>(n, 0)), "p");
  w.write_kl(kf, n, lp.data(), prompts);
  try {
    w.commit();
    ADD_FAILURE() << "commit() should fail on every rank";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("rows of /kl/logprobs"), std::string::npos) << msg;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace
}  // namespace abl::testing
