//===- Streams.h - Launches queued in stream order --------------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Internal to libhot_simulator_runtime.so.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_LIB_RUNTIME_SIMULATOR_STREAMS_H
#define HOT_LIB_RUNTIME_SIMULATOR_STREAMS_H

#include "Scheduler.h"

#include <cstddef>

namespace hot::simulator {

/// Queues `launch` on `stream` with copies of its arguments, to run when the
/// stream is synchronized; runs it now without a stream, or when its
/// kernel's parameter sizes are unknown or do not match `paramsCount`.
void enqueueLaunch(void *stream, const Launch &launch, size_t paramsCount);

/// Runs the launches `stream` has queued, in order (nothing for null).
void flushStream(void *stream);

/// Runs what every stream has queued.
void flushAllStreams();

} // namespace hot::simulator

#endif // HOT_LIB_RUNTIME_SIMULATOR_STREAMS_H
