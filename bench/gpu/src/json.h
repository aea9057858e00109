//===- json.h - A reader for flat JSON kernel descriptions ------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Reads one object whose values are strings, numbers or arrays of them: all
// that a kernel description (README.md) holds. The GPU machine has no network
// and maybe no Python, so no library.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_BENCH_GPU_JSON_H
#define HOT_BENCH_GPU_JSON_H

#include <map>
#include <string>
#include <vector>

/// A string, a number or an array of values.
struct JsonValue {
  enum Kind { String, Number, Array } kind = Number;
  std::string string;
  double number = 0;
  std::vector<JsonValue> items;
};

/// Parses `text` as one flat object into `out`; false with `error` set on
/// anything else.
bool parseFlatJson(const std::string &text,
                   std::map<std::string, JsonValue> &out, std::string &error);

#endif // HOT_BENCH_GPU_JSON_H
