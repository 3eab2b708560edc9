// Backend selection: --backend and --comm values, and what a machine without the CUDA backend or
// without a device answers (the errors name the option and the reason).
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "abl/app/backend.h"
#include "abl/core/error.h"
#include "common/error_of.h"

using abl::testing::error_of;
using namespace abl;
using app::BackendKind;

namespace {

}  // namespace

TEST(Backend, CpuIsAlwaysThere) { EXPECT_EQ(app::resolve_backend("cpu"), BackendKind::cpu); }

TEST(Backend, AutoFollowsTheDevices) {
  std::string why;
  const bool cuda = app::cuda_backend_available(&why);
  EXPECT_EQ(app::resolve_backend("auto"), cuda ? BackendKind::cuda : BackendKind::cpu);
  if (!cuda) {
    EXPECT_FALSE(why.empty());
  }
}

TEST(Backend, CudaWithoutADeviceSaysWhy) {
  std::string why;
  if (app::cuda_backend_available(&why)) {
    EXPECT_EQ(app::resolve_backend("cuda"), BackendKind::cuda);
    EXPECT_EQ(app::resolve_backend("gpu"), BackendKind::cuda);
    return;
  }
  const std::string e = error_of([] { app::resolve_backend("cuda"); });
  EXPECT_NE(e.find("--backend cuda"), std::string::npos) << e;
  EXPECT_NE(e.find(why), std::string::npos) << e;
}

TEST(Backend, BadValuesAreNamed) {
  const std::string e = error_of([] { app::resolve_backend("tpu"); });
  EXPECT_NE(e.find("'tpu'"), std::string::npos) << e;
  EXPECT_EQ(app::parse_gpu_comm("auto"), app::GpuComm::automatic);
  EXPECT_EQ(app::parse_gpu_comm("nccl"), app::GpuComm::nccl);
  EXPECT_EQ(app::parse_gpu_comm("mpi"), app::GpuComm::mpi);
  const std::string c = error_of([] { app::parse_gpu_comm("gloo"); });
  EXPECT_NE(c.find("--comm"), std::string::npos) << c;
  EXPECT_NE(c.find("'gloo'"), std::string::npos) << c;
}
