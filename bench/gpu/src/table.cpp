//===- table.cpp - The rows of the GPU bench's result table ---------------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#include "table.h"

#include <cstdio>

namespace {
std::string fixed(double value, int digits) {
  if (value < 0)
    return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.*f", digits, value);
  return buffer;
}
} // namespace

std::string formatRow(const Row &r) {
  char error[32] = "-";
  if (r.relError >= 0)
    std::snprintf(error, sizeof(error), "%.2e", r.relError);
  std::string rate = r.rate < 0 ? "-" : fixed(r.rate, 1) + " " + r.rateUnit;
  std::string unwritten = r.unwritten < 0 ? "-" : std::to_string(r.unwritten);
  std::string ratio = r.vsInt8 < 0 ? "-" : fixed(r.vsInt8, 2) + "x";
  return "| " + r.group + " | " + r.shape + " | " + r.impl + " | " +
         fixed(r.ms, 3) + " | " + rate + " | " + error + " | " + unwritten +
         " | " + ratio + " | " + r.note + " |";
}

void printTable(const std::vector<Row> &rows) {
  std::printf("| op | shape | implementation | median ms | rate | rel. error "
              "| unwritten | vs cuBLASLt int8 | note |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---|\n");
  for (const Row &r : rows)
    std::printf("%s\n", formatRow(r).c_str());
}
