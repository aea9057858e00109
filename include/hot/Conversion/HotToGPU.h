//===- HotToGPU.h - hot.int_matmul as a tensor-core GPU kernel --*- C++ -*-===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef HOT_CONVERSION_HOTTOGPU_H
#define HOT_CONVERSION_HOTTOGPU_H

#include "hot/Dialect/Hot/HotOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace mlir::hot {

/// The integer tensor-core instruction a kernel is built around.
enum class IntMmaKind {
  /// `mma.sync m16n8k32` on s8 operands (every chip from sm_80 on).
  S8,
  /// `mma.sync m16n8k64` on s4 operands packed two per byte, low nibble first
  /// (native on sm_80, sm_86 and sm_89 only).
  S4,
  /// `wgmma.mma_async m64nNk32` on s8 operands (sm_90a only): a warpgroup of
  /// four warps per 64 rows of the block tile, N = the block tile's columns,
  /// both operands read from shared memory through matrix descriptors.
  WgmmaS8,
};

/// Thread-block and warp tiling of the kernel. Sizes along K are in bytes of
/// the (possibly packed) operands: 64 bytes are 64 s8 or 128 s4 values.
/// wgmma kernels ignore warpM and warpN: each warpgroup computes 64 rows and
/// all tileN columns of the block tile.
struct IntMmaTiling {
  int64_t tileM = 128;
  int64_t tileN = 128;
  int64_t tileKBytes = 64;
  int64_t warpM = 64;
  int64_t warpN = 32;
  /// Shared-memory stages of the cp.async pipeline.
  int64_t stages = 3;

  /// The defaults of a kernel kind: 128x128x64 bytes, 8 warps of 64x32 and 3
  /// stages (48 KiB of static shared memory) for mma.sync; 128x128x128 bytes,
  /// two warpgroups and 4 stages (129 KiB of dynamic shared memory) for
  /// wgmma.
  static IntMmaTiling getDefault(IntMmaKind kind);

  /// Threads of one block: 32 per warp tile for mma.sync, 128 per 64 rows for
  /// wgmma.
  int64_t numThreads(IntMmaKind kind) const;
  /// Shared memory of one thread block, in bytes: static for mma.sync,
  /// dynamic for wgmma (with 1 KiB to align the tiles to the 128-byte
  /// swizzle's 1 KiB period).
  int64_t sharedBytes(IntMmaKind kind) const;
};

/// What the kernel writes: the exact i32 product, or the fused `hot.rescale`
/// `(f32(acc) * row_scale) * col_scale` converted to `resultElementType`.
struct IntMmaEpilogue {
  bool rescale = false;
  /// i32 without rescale; the rescale's float type with it.
  Type resultElementType;
  /// Rank of each scale operand: 0 (one scale) or 1 (one per row/column).
  int64_t rowScaleRank = 0;
  int64_t colScaleRank = 0;
};

/// A kernel: `C[M, N] = A[M, K] · B[K, N]` with A given as [M][KBytes] and B as
/// [N][KBytes] (both K-contiguous) in global memory. `kBytes` must be a
/// multiple of 16 (the cp.async width); K beyond the operands' data must be
/// zero (zeros do not change the integer sum).
///
/// With `splitK` > 1, K is split among the blocks along grid.z: block z
/// multiplies K tiles [z * t, (z + 1) * t) (t = getKTilesPerSplit(), the last
/// split fewer when they do not divide), stores its i32 accumulators to its
/// slot of a workspace, and counts itself in its output tile's counter; the
/// tile's last block to arrive adds every split's slot (integers: the sum
/// does not depend on the order) and runs the epilogue.
struct IntMmaKernelSpec {
  int64_t m = 0, n = 0, kBytes = 0;
  IntMmaKind kind = IntMmaKind::S8;
  IntMmaTiling tiling;
  IntMmaEpilogue epilogue;
  int64_t splitK = 1;

  int64_t getNumKTiles() const;
  int64_t getKTilesPerSplit() const;
  /// Output tiles: the grid's x * y.
  int64_t getNumTiles() const;
  /// i32 words of the split-K workspace: every split's accumulators of every
  /// tile (0 without split K).
  int64_t getWorkspaceWords() const;
  /// A symbol name that is unique for the spec.
  std::string getKernelName() const;
};

/// Checks that `tiling` can be built for `kind` (warp tiles of whole MMA
/// shapes, every thread copying whole 16-byte chunks, shared memory within
/// the 48 KiB of static shared memory for mma.sync and the 227 KiB of
/// dynamic shared memory for wgmma). Returns a description of the first
/// problem.
LogicalResult verifyIntMmaTiling(const IntMmaTiling &tiling, IntMmaKind kind,
                                 std::string &reason);

/// The kernel's arguments, in order: A memref<M x KBytes x i8>, B
/// memref<N x KBytes x i8>, C memref<M x N x elt>, with a fused rescale
/// the row and column scales (memref<f32> or memref<M/N x f32>), and with
/// split K the workspace memref<getWorkspaceWords() x i32> and the tile
/// counters memref<getNumTiles() x i32>, which must be zero at the launch.
SmallVector<Type> getIntMmaKernelArgumentTypes(MLIRContext *ctx,
                                               const IntMmaKernelSpec &spec);

/// Builds (or finds, when one with the same spec exists) the `gpu.func`
/// kernel of `spec` in `module`: a grid of ceil(N / tileN) x ceil(M / tileM)
/// x splitK blocks of `tiling.numThreads(kind)` threads. Operands go global ->
/// shared with 16-byte `nvgpu.device_async_copy` (zero-filled beyond M, N and
/// K) through a `stages`-deep pipeline of async groups, into XOR-swizzled
/// shared tiles. For mma.sync kinds, warps read them with `nvgpu.ldmatrix` and
/// multiply with `nvgpu.mma.sync`; for WgmmaS8 the swizzle is the hardware's
/// (128, 64 or 32 bytes, by tileKBytes) and warpgroups multiply with
/// `nvvm.wgmma.mma_async`, one group in flight while the next tile is
/// awaited. Stores are guarded by the matrix bounds. A WgmmaS8 kernel must be
/// launched with `getIntMmaDynamicSharedBytes` bytes of dynamic shared memory.
FailureOr<gpu::GPUFuncOp> buildIntMmaKernel(OpBuilder &builder, Location loc,
                                            gpu::GPUModuleOp module,
                                            const IntMmaKernelSpec &spec);

/// Dynamic shared memory a launch of the kernel of `spec` needs (0 for the
/// mma.sync kinds, whose tiles are static workgroup attributions).
int64_t getIntMmaDynamicSharedBytes(const IntMmaKernelSpec &spec);

/// Builds (or finds) a kernel that zeroes a memref<`size` x i32> (its only
/// argument): one element per thread, getZeroKernelThreads() threads per
/// block, ceil(size / threads) blocks.
gpu::GPUFuncOp buildZeroKernel(OpBuilder &builder, Location loc,
                               gpu::GPUModuleOp module, int64_t size);
int64_t getZeroKernelThreads();

/// Appends to `module` a `gpu.func` kernel `name` with arguments `argTypes`
/// and workgroup attributions `workgroup`, launched with `threads` threads
/// (its known block size); the body is an empty entry block.
gpu::GPUFuncOp createKernelFunc(OpBuilder &builder, Location loc,
                                gpu::GPUModuleOp module, StringRef name,
                                TypeRange argTypes, TypeRange workgroup,
                                int64_t threads);

/// Returns the `gpu.module` named `name` in `module`, creating it (and marking
/// `module` as a `gpu.container_module`) if needed.
gpu::GPUModuleOp getOrCreateGPUModule(OpBuilder &builder, ModuleOp module,
                                      StringRef name);

/// Emits a tensor<rows x KBytes x i8> holding `operand` (a rank-2 i8 tensor)
/// with K contiguous: read as [K][rows] when `kMajor` is set, as [rows][K]
/// otherwise; K zero-padded up to `kBytes` bytes; packed two values per byte
/// (low nibble first) for IntMmaKind::S4. One `linalg.generic`, so that it
/// maps onto the GPU like every other linalg op.
Value buildKContiguousOperand(OpBuilder &builder, Location loc, Value operand,
                              bool kMajor, int64_t kBytes, IntMmaKind kind);

/// The K extent in bytes of an operand with `k` values: packed for S4, padded
/// to the 16-byte cp.async width.
int64_t getPaddedKBytes(int64_t k, IntMmaKind kind);

/// The order of K in a product's K-contiguous operands. Integer sums do not
/// depend on it, so any order that both operands share gives the product
/// bit for bit. K may be `samples` x `rowsPerSample` rows of a token
/// projection (hot.lowrank along the tokens of each sample), the first
/// `fullRows` of each sample the kept rows of full blocks, the others its
/// tail. Natural: k as hot.int_matmul indexes it (sample after sample).
/// Tails last: the full blocks' rows of every sample first, then the tail
/// rows of every sample. A block's kept rows then start at a multiple of
/// their count, so the kernel that writes them stores aligned vectors.
struct OperandKOrder {
  int64_t samples = 0, rowsPerSample = 0, fullRows = 0;
  bool tailsLast = false;

  bool isNatural() const { return !tailsLast; }
  int64_t tailRows() const { return rowsPerSample - fullRows; }
  bool operator==(const OperandKOrder &other) const {
    return samples == other.samples && rowsPerSample == other.rowsPerSample &&
           fullRows == other.fullRows && tailsLast == other.tailsLast;
  }
  /// "" for the natural order, "_tl<samples>x<fullRows>" otherwise.
  std::string getSuffix() const;
  /// The position in this order of row `row` of sample `sample` (the
  /// natural k = sample * rowsPerSample + row); `tail` says statically
  /// whether the row is a tail row (row >= fullRows). Needs the projection's
  /// sizes.
  Value emitPosition(OpBuilder &b, Location loc, Value sample, Value row,
                     bool tail) const;
  /// What emitPosition's result for the first full-block (`tail` false) or
  /// tail row of a sample is made of: the stride between samples (0 with one
  /// sample) times the sample, plus the position of sample 0's (static).
  int64_t getSampleStride(bool tail) const;
  int64_t getFirstPosition(bool tail) const;
  /// The natural k at `position` (the inverse of emitPosition).
  Value emitNaturalIndex(OpBuilder &b, Location loc, Value position) const;
};

/// A K-major i8 operand `in[k][rows]` rewritten K-contiguous as
/// `out[rows][kBytes]` (the layout of buildKContiguousOperand): K zero-padded
/// to kBytes, two values per byte when `packS4`, in `order`.
struct OperandTransposeSpec {
  int64_t k = 0, rows = 0, kBytes = 0;
  bool packS4 = false;
  OperandKOrder order;

  std::string getKernelName() const;
  /// Blocks along the output bytes (x) and rows (y); threads per block.
  int64_t getGridX() const;
  int64_t getGridY() const;
  static int64_t getNumThreads();
};

/// Builds (or finds) the kernel of `spec` in `module`: arguments in
/// memref<k x rows x i8>, out memref<rows x kBytes x i8>. Tiles of 64 rows x
/// 64 output bytes go through shared memory: coalesced reads of input rows,
/// 16-byte stores of output rows.
gpu::GPUFuncOp buildOperandTransposeKernel(OpBuilder &builder, Location loc,
                                           gpu::GPUModuleOp module,
                                           const OperandTransposeSpec &spec);

/// The tensor whose elements `value` holds in the same row-major order: its
/// source through tensor.collapse_shape and tensor.expand_shape.
Value stripReshapes(Value value);

/// The tensor whose elements `value` holds in the same row-major order,
/// perhaps as a wider float: its source through tensor.collapse_shape,
/// tensor.expand_shape and an exact bf16/f16-to-f32 extension (arith.extf on
/// tensors, or a linalg.generic of only that). Two values with one root are
/// the same data.
Value getDataRoot(Value value);

/// What a kernel that reads the f32 tensor `value` loads instead: the bf16
/// or f16 tensor that an extension of its data extends (getDataRoot),
/// reshaped to `value`'s shape at the builder's insertion point, or `value`
/// itself. The kernel extends each element as it loads it: the same f32
/// values, half the bytes.
Value getKernelSource(OpBuilder &b, Location loc, Value value);
/// The element type of getKernelSource(value), without building anything.
Type getKernelSourceElementType(Value value);

/// The only user of the f32 tensor `value` when it is an elementwise
/// truncation to bf16 or f16 with the default rounding (arith.truncf on
/// tensors, or a linalg.generic of only that): a kernel that produces
/// `value` can store the truncated values and replace it. Null otherwise.
Operation *getFusableTruncation(Value value);

/// `value` (static shape) reshaped to `type` (as many elements, the same
/// element type): one collapse when the shapes allow, else through 1-D.
Value reshapeTo(OpBuilder &b, Location loc, Value value,
                RankedTensorType type);

/// Whether `chip` (e.g. "sm_89") has native INT4 tensor cores: sm_80, sm_86,
/// sm_87 and sm_89 do; Hopper and later emulate s4 MMA with s8.
bool hasNativeInt4TensorCores(StringRef chip);

/// Whether `chip` has warpgroup MMA (`wgmma.mma_async`): sm_90a only (the
/// architecture-specific Hopper target; ptxas rejects wgmma on plain sm_90).
bool hasWarpgroupMma(StringRef chip);

/// The SM count of a typical part of `chip` (A100 108, A40 84, RTX 4090 128,
/// H100/H200 132; 108 for others): what tile selection aims to fill.
int64_t getTypicalSMCount(StringRef chip);

/// The SMs that launches aim to fill: `smCount` (an `sm-count` option), or
/// with 0 getTypicalSMCount(chip).
inline int64_t getSMCount(int64_t smCount, StringRef chip) {
  return smCount > 0 ? smCount : getTypicalSMCount(chip);
}

/// The threads an SM of `chip` holds at once: 1536 on sm_86, sm_87 and
/// sm_89, 2048 on sm_80 and sm_90.
int64_t getMaxThreadsPerSM(StringRef chip);

/// Declares (as an external model) that `gpu.launch_func` may read and write
/// every memref operand, so that launches created on tensors pass through
/// ownership-based buffer deallocation.
void registerLaunchFuncMemoryEffects(DialectRegistry &registry);

/// Rows go to grid.y, which CUDA bounds by 65535 blocks.
inline constexpr int64_t kMaxGridY = 65535;
/// Columns go to grid.x, which CUDA bounds by 2^31 - 1 blocks.
inline constexpr int64_t kMaxGridX = 2147483647;

struct IntMatmulToGPUOptions;

/// The modelled time of the kernel of `spec` (its tiling and split) on `sms`
/// SMs of `chip`, in units of one 128-byte K step of a 128 x 128 tile at the
/// tensor cores' full rate: waves of blocks (about one per SM at a time),
/// each K step bound by the MACs or by the operand loads (L2's bandwidth
/// shared by the busy SMs), a block's fixed latency and, with split K, the
/// exchange of partial tiles and a split's fixed cost (the launch that zeroes
/// the counters, the reductions). Constants calibrated on an H200
/// (LaunchModel.cpp).
double modelIntMmaTime(const IntMmaKernelSpec &spec, int64_t sms,
                       StringRef chip);

/// Sets the tiling and K split of `spec` (whose shape and kind are set): of
/// the options' tiling (with autoTiles also, where the kind can build them
/// and grid.y allows, tile-n doubled and times 1.5 for wgmma, and each
/// halving of tile-m and/or tile-n down to 64) and the options' split-k (at
/// most one split per K tile; with 0 every count up to
/// 16 whose workspace stays within 256 MiB; counts that give the same split
/// sizes are one candidate), the one modelIntMmaTime finds fastest on `sms`
/// SMs; ties keep the options' tiling, then the wider tiles (wgmma's N is
/// the tile's), then the smaller split.
void chooseIntMmaLaunch(const IntMatmulToGPUOptions &options,
                        IntMmaKernelSpec &spec, int64_t sms);

/// Options of the int_matmul -> tensor-core kernel rewrite.
struct IntMatmulToGPUOptions {
  /// The target chip, "sm_80" or newer.
  std::string chip = "sm_80";
  /// The tiling of every kernel (wgmma or mma.sync: see useWgmma).
  IntMmaTiling tiling;
  /// Use s4 MMA for operands on a 4-bit grid where the chip has INT4 cores.
  bool allowInt4 = true;
  /// Use wgmma where the chip has it (sm_90a); mma.sync otherwise.
  bool allowWgmma = true;
  /// Also consider `tiling` with tile-m and/or tile-n halved (down to 64)
  /// and, for wgmma, tile-n doubled.
  /// Of the tilings and K splits considered, each product gets the one that
  /// a model of the kernel's time on `smCount` SMs (0:
  /// getTypicalSMCount(chip)) finds fastest: enough blocks to fill the SMs,
  /// few in a last, partial wave.
  bool autoTiles = false;
  int64_t smCount = 0;
  /// Blocks along K per output tile (IntMmaKernelSpec::splitK): 0 considers
  /// up to 16, 1 never splits, more splits into that many (at most one per
  /// K tile).
  int64_t splitK = 0;

  /// Whether the products become wgmma kernels (WgmmaS8) rather than
  /// mma.sync ones (S8 or S4).
  bool useWgmma() const { return allowWgmma && hasWarpgroupMma(chip); }
  /// The gpu.module that receives the kernels.
  std::string gpuModuleName = "hot_kernels";
};

/// A launch of the operand transpose kernel before a product: it reads
/// `source` (the [K][rows] i8 tensor, through a `bufferization.to_buffer`
/// that only it uses) and writes `out` (a `memref.alloc`). A kernel that
/// produces `source` may write `out` itself in the spec's layout instead
/// (and erase the launch); the transposes that remain get their remark from
/// emitOperandTransposeRemarks.
struct OperandTransposeLaunch {
  gpu::LaunchFuncOp launch;
  OperandTransposeSpec spec;
  Value source, out;
  /// The product's location, and which operand ("lhs" or "rhs").
  Location productLoc;
  std::string operand;
};
/// The transposes of a module's products.
using OperandTransposes = SmallVector<OperandTransposeLaunch>;

/// Replaces `op` (and the `hot.rescale` that is its only user, fused into the
/// kernel's epilogue) by a `gpu.launch_func` of the kernel built by
/// buildIntMmaKernel on `bufferization.to_buffer`s of its operands (first
/// transposed, padded or packed where needed), and a
/// `bufferization.to_tensor` of the written buffer. K-major operands go
/// through the transpose kernel, in tails-last K order when both are token
/// projections of one shape; each launch is added to `transposes`. Emits a
/// remark on the MMA chosen; fails with an error on dynamic shapes.
FailureOr<gpu::LaunchFuncOp>
lowerIntMatmulToGPU(RewriterBase &rewriter, IntMatmulOp op,
                    const IntMatmulToGPUOptions &options,
                    OperandTransposes &transposes);

/// The transpose of `transposes` that a kernel writing `q` (an i8 tensor) in
/// its place could take over: the one that reads q, q's only reader (through
/// its `bufferization.to_buffer`), writing a `memref.alloc` without operands
/// in `anchor`'s block. Null when there is none; the caller checks the
/// layout (its spec).
OperandTransposeLaunch *findTransposeOf(OperandTransposes &transposes, Value q,
                                        Operation *anchor);

/// Hands `transpose` (of findTransposeOf) over to a kernel that will write
/// its result, in its layout, before `anchor`: moves the result's allocation
/// before `anchor` (where the kernel's launch goes), erases the transpose's
/// launch, q's `bufferization.to_buffer` and the transpose kernel once no
/// launch uses it, drops `transpose` from `transposes` and returns the
/// allocation. q itself is left to the caller, without readers.
Value takeOverTranspose(RewriterBase &rewriter, OperandTransposes &transposes,
                        OperandTransposeLaunch *transpose, Operation *anchor);

/// Remarks on the transposes that no producer took over: why each operand
/// needs one and which kernel does it.
void emitOperandTransposeRemarks(const OperandTransposes &transposes);

} // namespace mlir::hot

#endif // HOT_CONVERSION_HOTTOGPU_H
