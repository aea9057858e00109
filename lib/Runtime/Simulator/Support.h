//===- Support.h - Error reporting of the simulator runtime -----*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Internal to libhot_simulator_runtime.so.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_LIB_RUNTIME_SIMULATOR_SUPPORT_H
#define HOT_LIB_RUNTIME_SIMULATOR_SUPPORT_H

#include <string>

namespace hot::simulator {

/// Prints "hot_simulator_runtime: <entry>: <message>" on stderr; aborts when
/// HOT_SIMULATOR_ABORT_ON_ERROR is set.
void reportError(const char *entry, const std::string &message);

/// Prints a runtime error and aborts: for failures after which the caller
/// would crash anyway (e.g. on a null allocation).
[[noreturn]] void fatal(const char *entry, const std::string &message);

/// printf into a std::string.
std::string format(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

} // namespace hot::simulator

#endif // HOT_LIB_RUNTIME_SIMULATOR_SUPPORT_H
