// The NCCL communicator on a GPU: bootstrap through MPI and the collectives on device memory.
// Each rank forms its own one-rank communicator (NCCL refuses two ranks on one device), so the
// test runs under any mpirun size on a single-GPU machine; without a GPU it is skipped visibly.
#include <gtest/gtest.h>

#include <vector>

#include "abl/backend/cuda/device.h"
#include "abl/parallel/cuda/nccl_comm.h"

TEST(Nccl, CollectivesOnOneRankCommunicator) {
  if (abl::cuda::device_count() == 0) GTEST_SKIP() << "no CUDA device: " << abl::cuda::device_summary();
  cudaStream_t compute;
  ASSERT_EQ(cudaStreamCreate(&compute), cudaSuccess);
  {
    abl::cuda::NcclComm comm(MPI_COMM_SELF, compute);
    EXPECT_EQ(comm.size(), 1);
    std::vector<float> host = {1.f, 2.f, 3.f, 4.f};
    float *d_send = nullptr, *d_recv = nullptr;
    ASSERT_EQ(cudaMalloc(&d_send, 16), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&d_recv, 16), cudaSuccess);
    cudaMemcpy(d_send, host.data(), 16, cudaMemcpyHostToDevice);
    comm.start_all_gather(d_send, d_recv, 16)->wait();
    std::vector<float> back(4);
    cudaStreamSynchronize(compute);
    cudaMemcpy(back.data(), d_recv, 16, cudaMemcpyDeviceToHost);
    EXPECT_EQ(back, host);
    int64_t* d_i = nullptr;
    ASSERT_EQ(cudaMalloc(&d_i, 8), cudaSuccess);
    const int64_t seven = 7;
    cudaMemcpy(d_i, &seven, 8, cudaMemcpyHostToDevice);
    comm.all_reduce_sum(d_i, 1);
    int64_t out = 0;
    cudaMemcpy(&out, d_i, 8, cudaMemcpyDeviceToHost);
    EXPECT_EQ(out, 7);
    comm.barrier();
    cudaFree(d_send);
    cudaFree(d_recv);
    cudaFree(d_i);
  }
  cudaStreamDestroy(compute);
}
