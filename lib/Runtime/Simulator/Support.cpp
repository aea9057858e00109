//===- Support.cpp - Error reporting of the simulator runtime -------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "Support.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>

using namespace hot::simulator;

namespace {
bool abortOnError() {
  static const bool value =
      std::getenv("HOT_SIMULATOR_ABORT_ON_ERROR") != nullptr;
  return value;
}

void print(const char *entry, const std::string &message) {
  std::fprintf(stderr, "hot_simulator_runtime: %s: %s\n", entry,
               message.c_str());
  std::fflush(stderr);
}
} // namespace

void hot::simulator::reportError(const char *entry,
                                 const std::string &message) {
  print(entry, message);
  if (abortOnError())
    std::abort();
}

void hot::simulator::fatal(const char *entry, const std::string &message) {
  print(entry, message);
  std::abort();
}

std::string hot::simulator::format(const char *fmt, ...) {
  va_list args, copy;
  va_start(args, fmt);
  va_copy(copy, args);
  int size = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string result(size > 0 ? size : 0, '\0');
  std::vsnprintf(result.data(), result.size() + 1, fmt, args);
  va_end(args);
  return result;
}
