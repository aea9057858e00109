//===- Chips.h - What a chip name tells ------------------------*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_CONVERSION_CHIPS_H
#define HOT_CONVERSION_CHIPS_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::hot {

/// The SM version of `chip` ("sm_90a" -> 90, "sm_100f" -> 100), or 0 when it
/// does not start with "sm_" and a number.
inline unsigned getSMVersion(llvm::StringRef chip) {
  unsigned version = 0;
  if (!chip.consume_front("sm_") ||
      chip.take_while(llvm::isDigit).getAsInteger(10, version))
    return 0;
  return version;
}

} // namespace mlir::hot

#endif // HOT_CONVERSION_CHIPS_H
