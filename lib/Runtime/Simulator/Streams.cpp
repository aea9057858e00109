//===- Streams.cpp - Streams and events -----------------------------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Every launch, copy and set is complete when its call returns, so streams
// and events order nothing: they are non-null placeholders (generated code
// treats null as a failure), and waiting on them returns at once.
//
//===----------------------------------------------------------------------===//

#include "hot/Runtime/SimulatorRuntime.h"

namespace {
char streamPlaceholder;
char eventPlaceholder;
} // namespace

extern "C" void *mgpuStreamCreate() { return &streamPlaceholder; }

extern "C" void mgpuStreamDestroy(void * /*stream*/) {}

extern "C" void mgpuStreamSynchronize(void * /*stream*/) {}

extern "C" void mgpuStreamWaitEvent(void * /*stream*/, void * /*event*/) {}

extern "C" void *mgpuEventCreate() { return &eventPlaceholder; }

extern "C" void mgpuEventDestroy(void * /*event*/) {}

extern "C" void mgpuEventSynchronize(void * /*event*/) {}

extern "C" void mgpuEventRecord(void * /*event*/, void * /*stream*/) {}
