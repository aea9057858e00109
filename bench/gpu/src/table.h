//===- table.h - The rows of the GPU bench's result table -------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Host-only (no CUDA headers): steps.cpp sends rows between processes, and
// python/tests/test_bench_steps.py builds both with the host compiler.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_BENCH_GPU_TABLE_H
#define HOT_BENCH_GPU_TABLE_H

#include <string>
#include <vector>

/// One line of the table.
struct Row {
  std::string group;        ///< "copy" or the GEMM's name
  std::string shape;        ///< "M x N x K" or the byte count
  std::string impl;         ///< implementation, e.g. "cuBLASLt int8 (IMMA)"
  double ms = -1;           ///< median time, negative when not run
  double rate = -1;         ///< TFLOP/s (TOPS for int8) or GB/s for copies
  std::string rateUnit;     ///< "TFLOP/s", "TOPS", "GB/s"
  double relError = -1;     ///< relative Frobenius error, negative: not checked
  long long unwritten = -1; ///< outputs still holding the poison pattern
  double vsInt8 = -1;       ///< cuBLASLt int8 time / this time (>1: faster)
  std::string note;
};

/// The row as one markdown table line (no newline).
std::string formatRow(const Row &row);

/// Prints the table (markdown) to stdout.
void printTable(const std::vector<Row> &rows);

#endif // HOT_BENCH_GPU_TABLE_H
