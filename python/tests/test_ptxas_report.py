"""bench/gpu/ptxas_report.py's occupancy model (--waves): the blocks an SM holds at once
against the occupancy figures of NVIDIA's CUDA Occupancy Calculator and programming guide
(per-SM limits of compute capability 8.0, 8.6, 8.9 and 9.0: 64K registers allocated per warp in
units of 256, 2048 or 1536 threads, 32, 16 or 24 blocks, shared memory with 1 KiB reserved per
block), and its reading of the grids of a lowered module's launches."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "gpu"))
ptxas_report = pytest.importorskip("ptxas_report")


@pytest.mark.parametrize("chip,threads,regs,smem,blocks", [
    # Bound by registers: 256 threads at 40 registers take 10240 (5 warp units of 1280 each
    # per 32 threads): 6 blocks of 8 warps in 65536.
    ("sm_90a", 256, 40, 0, 6),
    ("sm_90a", 256, 64, 0, 4),
    ("sm_90a", 256, 33, 0, 6),    # 33 registers take 1056 per warp, allocated as 1280
    ("sm_90a", 128, 128, 0, 4),
    ("sm_80", 256, 255, 0, 1),
    # Bound by threads: 2048 on 8.0 and 9.0, 1536 on 8.6 and 8.9.
    ("sm_90", 256, 32, 0, 8),
    ("sm_86", 256, 32, 0, 6),
    ("sm_89", 256, 32, 0, 6),
    # Bound by blocks: 32 on 8.0 and 9.0, 16 on 8.6, 24 on 8.9.
    ("sm_80", 32, 16, 0, 32),
    ("sm_86", 32, 16, 0, 16),
    ("sm_89", 32, 16, 0, 24),
    # Bound by shared memory: 228 KiB on 9.0 and 164 KiB on 8.0, less 1 KiB per block.
    ("sm_90a", 128, 32, 100 * 1024, 2),
    ("sm_90a", 128, 32, 48 * 1024, 4),
    ("sm_80", 128, 32, 80 * 1024, 2),
    ("sm_80", 128, 32, 81 * 1024, 2),  # 2 x (81 + 1) KiB = 164 KiB: exactly full
    ("sm_80", 128, 32, 82 * 1024, 1),
])
def test_resident_blocks(chip, threads, regs, smem, blocks):
    assert ptxas_report.resident_blocks(chip, threads, regs, smem) == blocks


def test_launches_reads_constant_grids():
    lowered = """
      %24 = llvm.mlir.constant(256 : index) : i64
      %25 = llvm.mlir.constant(1 : index) : i64
      %22 = llvm.mlir.constant(64 : index) : i64
      %23 = llvm.mlir.constant(12 : index) : i64
      %17 = llvm.mlir.constant(99328 : i32) : i32
      gpu.launch_func <%53 : !llvm.ptr> @hot_kernels::@k_quantize blocks in (%23, %22, %25) threads in (%24, %25, %25) : i64 args(%a : !llvm.ptr)
      gpu.launch_func <%53 : !llvm.ptr> @hot_kernels::@k_mma blocks in (%22, %23, %25) threads in (%24, %25, %25) : i64 dynamic_shared_memory_size %17 args(%a : !llvm.ptr)
      gpu.launch_func <%53 : !llvm.ptr> @hot_kernels::@k_dynamic blocks in (%99, %25, %25) threads in (%24, %25, %25) : i64 args(%a : !llvm.ptr)
      gpu.launch_func <%53 : !llvm.ptr> @linalg_kernels::@generic blocks in (%23, %25, %25) threads in (%24, %25, %25) : i64 args(%a : !llvm.ptr)
    """
    assert ptxas_report.launches(lowered) == {
        "k_quantize": (12 * 64, 256, 0),
        "k_mma": (64 * 12, 256, 99328),
    }
