"""The host side of lowered GPU modules, run for real on a machine without a GPU (hot.fake_cuda:
the generated host code over libhot_cuda_runtime.so over a fake CUDA driver that loads the real
cubins, checks every call against the driver API's rules, and runs no kernel). What these tests
check: every kernel of a ViT-B layer's backward, and of the bundled ViT block's training step, is
found and launched without a driver or runtime error; a call gives back the memory it takes; a
second call takes none from the driver (the runtime's cache); the module's own buffers, which
only kernels touch, are device memory, not managed memory. The kernels' results are checked
elsewhere (the simulator, and a GPU when lent)."""

import re
import subprocess
import sys

import pytest

from hot import demo, fake_cuda, runner

sys.path.insert(0, str(fake_cuda.ROOT / "bench" / "gpu"))
import export  # noqa: E402  (bench/gpu/export.py: the ViT-B layer modules)


@pytest.fixture(scope="module")
def driver(tmp_path_factory):
    """The folder holding the fake libcuda.so.1."""
    try:
        return fake_cuda.build_driver(tmp_path_factory.mktemp("fake_driver"))
    except fake_cuda.Unavailable as why:
        pytest.skip(str(why))


def _checked(run):
    """``run``'s per-call counters, after checking that nothing failed."""
    assert run.returncode == 0, run.log[-4000:]
    assert run.errors() == [], "\n".join(run.errors()[:20])
    assert re.search(r"^fake_cuda: summary: \d+ launches, 0 errors,", run.log, re.M)
    assert all(call["errors"] == 0 for call in run.calls)
    return run.calls


# (layer, chip): the wgmma kernels (129 KiB of dynamic shared memory, opted in) and a split-K
# product on sm_90a; mma.sync with s4 operands on sm_80.
CASES = [("fc1", "sm_90a"), ("fc1", "sm_80"), ("proj", "sm_90a")]


@pytest.mark.parametrize("layer,chip", CASES, ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_layer_host_code_on_fake_driver(driver, tmp_path, layer, chip):
    """One bf16 ViT-B layer's HOT backward (bench/gpu/export.py's module)."""
    o, i = next((o, i) for name, o, i in export.LAYERS if name == layer)
    inputs = [[export.BATCH, export.TOKENS, i], [o, i], [export.BATCH, export.TOKENS, o]]
    run = fake_cuda.run(export.layer_module("layer", o, i, "bf16"), chip,
                        ["--hot-rewrite-backward-matmuls", *runner.cuda_pipeline(chip)], "layer",
                        inputs, tmp_path, driver)
    first, second = _checked(run)
    kernels = run.kernels
    # As many launches per call as the modules have kernels, the same ones in both calls.
    assert kernels > 0
    assert (first["launches"], second["launches"]) == (kernels, 2 * kernels)
    assert sorted(run.launched[:kernels]) == sorted(run.launched[kernels:])
    # The tensor-core products ran with the shared memory they asked for: 4 stages of 128-byte
    # K tiles of A and B, plus 1 KiB of alignment (128x128 tiles: 129 KiB; 128x256: 193 KiB).
    if chip == "sm_90a":
        opted = re.findall(r"cuFuncSetAttribute\(hot_int_mma_wgmma_s8_\w+_t(\d+)x(\d+)x128_s4\w*, "
                           r"8, (\d+)\)", run.log)
        assert opted
        assert all(int(smem) == 4 * (int(m) + int(n)) * 128 + 1024 for m, n, smem in opted)
    # The runner's buffers (the arguments and the results, which the host writes or reads) are
    # managed memory; every buffer of the module's own, which only its kernels touch, is device
    # memory (hot-gpu-device-buffers).
    assert first["managed"] == len(inputs) + 2
    assert first["device"] > 0
    # What the first call took from the driver is kept for the second, which takes nothing.
    assert first["live"] == second["live"]
    assert (second["device"], second["managed"]) == (first["device"], first["managed"])
    assert not {"cuMemAlloc_v2", "cuMemAllocManaged"} & set(second["driver_calls"])
    # One stream synchronization per call, and the stream comes from the runtime's pool; the
    # primary context stays current (no push and pop per mgpu call), the frees' events are
    # reused, each launch's shared-memory opt-in was done by the first call.
    calls = second["driver_calls"]
    assert calls["cuStreamSynchronize"] == 1
    assert not {"cuStreamCreate", "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2", "cuEventCreate",
                "cuEventDestroy_v2", "cuFuncSetAttribute", "cuDeviceGet",
                "cuFuncGetParamInfo"} & set(calls)
    # Every kernel's parameter count was compared with the host's arguments, once (the fake
    # driver read it from the cubin's tables; a mismatch would be a runtime error above), and
    # every launch's arguments were read against those tables.
    assert first["driver_calls"]["cuFuncGetParamInfo"] >= 2 * kernels


def test_training_step_host_code_on_fake_driver(driver, tmp_path):
    """The bundled ViT block's whole training step (hot-training-pipeline; test_gpu_execution's
    test_training_step_on_gpu runs its kernels on the simulator) on sm_90a: some 200 kernels,
    most of them the generic linalg mapping's, each in a module of its own."""
    text = subprocess.run([runner.find_hot_opt(), str(demo.FIXTURE),
                           "--hot-training-pipeline=remarks=false"],
                          capture_output=True, text=True, check=True).stdout
    run = fake_cuda.run(text, "sm_90a", runner.cuda_pipeline("sm_90a"), "train_step", "demo",
                        tmp_path, driver)
    first, second = _checked(run)
    assert run.kernels > 100
    # Each call launches every kernel at least once and the same kernels as the other call.
    launches = first["launches"]
    assert launches >= run.kernels and second["launches"] == 2 * launches
    assert sorted(run.launched[:launches]) == sorted(run.launched[launches:])
    # Managed memory holds the runner's buffers (the arguments and the results, which the host
    # writes or reads) and nothing else: every buffer of the step's own is device memory. The
    # second call takes nothing from the driver.
    signature = runner.compile_module(text, target="cuda", chip="sm_90a", cache_dir=tmp_path,
                                      load=False, pipeline=runner.cuda_pipeline("sm_90a")
                                      ).signatures["train_step"]
    runner_buffers = (sum(isinstance(t, runner.TensorType) for t in signature.inputs)
                      + len(signature.tensor_results))
    assert first["managed"] == runner_buffers
    assert first["device"] > runner_buffers
    assert (second["device"], second["managed"], second["live"]) == \
        (first["device"], first["managed"], first["live"])
    assert second["driver_calls"]["cuStreamSynchronize"] == 1
