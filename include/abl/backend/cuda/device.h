// CUDA device discovery. Safe to call on machines without a GPU or driver:
// it reports the condition instead of failing.
#pragma once
#include <cstdint>
#include <string>

namespace abl::cuda {

// Number of usable devices; 0 when there is no driver or no device.
int device_count();
// One line: "2 × NVIDIA H100 80GB HBM3 (sm_90, 79.1 GiB)" or why none is usable.
std::string device_summary();
// Total memory of a device in bytes (0 when unknown); does not create a context.
int64_t device_memory_bytes(int device);
// The device's PCI bus id ("0000:41:00.0"), the same whatever CUDA_VISIBLE_DEVICES numbers it;
// empty when unknown.
std::string device_pci_bus_id(int device);
// Binds this process to device local_rank % device_count() (before any other CUDA work); returns
// the device, or -1 when there is none.
int select_device(int local_rank);

}  // namespace abl::cuda
