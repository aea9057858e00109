//===- steps.h - The GPU bench's steps, each in a child process -*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// A lent GPU gives a session a few minutes, and a kernel that faults, hangs or
// fails a CUDA call can end the whole process: a CUDA error poisons the
// context, and the harness exits on the first failed call. So the benchmark
// is a list of steps run by child processes: a child sets up (the CUDA
// context, the libraries) and runs steps in order, sending each step's rows
// back over a pipe as soon as the step ends. When a child dies or a step
// outlasts its limit (the child is killed), that step alone is reported as
// failed and a fresh child goes on with the next one. Host-only: no CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_BENCH_GPU_STEPS_H
#define HOT_BENCH_GPU_STEPS_H

#include "table.h"

#include <functional>
#include <string>
#include <vector>

/// What one step produced.
struct StepResult {
  std::vector<Row> rows;
  /// Other output lines, e.g. those of the kernel-by-kernel table.
  std::vector<std::string> lines;
  /// Empty when the step ran to its end, else why it did not: "exited with
  /// status 1", "killed by signal 11 (Segmentation fault)", "timed out after
  /// 60 s", "not run: ...".
  std::string failure;
};

/// One step of the benchmark. `run` is called in a child process and may read
/// the results of the steps before it (empty rows where one failed).
struct Step {
  std::string label; ///< what the progress log and the failure row call it
  std::function<StepResult(const std::vector<StepResult> &done)> run;
};

/// Time limits, in seconds.
struct StepLimits {
  double setup = 120; ///< a child's `setup`, before its first step
  double step = 60;   ///< each step
  double total = 270; ///< no step starts later than this after runSteps began
};

/// Runs `steps` in order, each in a child process (see the file comment);
/// each child first calls `setup`. Logs each step's rows to stderr as they
/// arrive (formatRow), so that they outlive a run killed from outside.
/// Returns one result per step. When a child dies during its setup, every
/// remaining step fails with that reason (the next child would too).
std::vector<StepResult> runSteps(const std::vector<Step> &steps,
                                 const std::function<void()> &setup,
                                 const StepLimits &limits);

#endif // HOT_BENCH_GPU_STEPS_H
