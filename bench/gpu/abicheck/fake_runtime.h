//===- fake_runtime.h - What the host-only mgpu* functions recorded -------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_BENCH_GPU_ABICHECK_FAKE_RUNTIME_H
#define HOT_BENCH_GPU_ABICHECK_FAKE_RUNTIME_H

#include <cstdint>
#include <set>
#include <vector>

/// Buffers from mgpuMemAlloc not yet freed.
extern std::set<void *> liveAllocations;
/// The first 8 bytes of every parameter of every launch, in order.
extern std::vector<std::vector<uint64_t>> launchParams;
/// The live buffers mgpuMemAlloc gave without host_shared (device memory the
/// host cannot read): PROT_NONE here, so that host code touching one faults.
extern std::set<void *> deviceAllocations;

#endif // HOT_BENCH_GPU_ABICHECK_FAKE_RUNTIME_H
