//===- copy.h - Device copy bandwidth, the memory ceiling -------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_BENCH_GPU_COPY_H
#define HOT_BENCH_GPU_COPY_H

#include "common.h"

/// Times a device-to-device copy of `bytes` with cudaMemcpy and with a plain
/// copy kernel; one row each, in GB/s of bytes read plus bytes written.
std::vector<Row> measureCopies(size_t bytes);

#endif // HOT_BENCH_GPU_COPY_H
