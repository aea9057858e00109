// The runtime's context handling over the fake driver: on a thread without a
// current context, the primary context becomes current and stays (as the
// CUDA runtime API leaves it), so later calls push and pop nothing; over a
// context of the caller's own, each call works in the primary context and
// gives the caller's back.
// REQUIRES: hot-cuda-runtime
// RUN: rm -rf %t.driver && mkdir %t.driver
// RUN: %build_fake_cuda_driver %t.driver/libcuda.so.1
// RUN: %host_cc -O1 -I%S/Inputs %s -o %t -ldl
// RUN: env LD_LIBRARY_PATH=%t.driver HOT_CUDA_ABORT_ON_ERROR=1 \
// RUN:   %t %hot_cuda_runtime 2>&1 | FileCheck %s

#include "host.h"

static int (*currentContext)(int *);
static void (*pushUserContext)(void);
static int (*popUserContext)(void);

static void sayContext(const char *when) {
  int depth = 0;
  int which = currentContext(&depth);
  say("%s: %s current, %d stacked", when,
      which == 0   ? "none"
      : which == 1 ? "primary"
                   : "caller's",
      depth);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  loadRuntime(argv[1]);
  void *driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  *(void **)&currentContext = symbol(driver, "fakeCudaCurrentContext");
  *(void **)&pushUserContext = symbol(driver, "fakeCudaPushUserContext");
  *(void **)&popUserContext = symbol(driver, "fakeCudaPopUserContext");
  void (*shutDown)(void);
  *(void **)&shutDown = symbol(driver, "fakeCudaShutDown");

  // CHECK: start: none current, 0 stacked
  sayContext("start");
  void *stream = rt.streamCreate();
  // CHECK-NEXT: after a call: primary current, 1 stacked
  sayContext("after a call");

  // The caller's own context: the runtime's calls work in the primary one
  // (the stream they create is the primary context's) and give it back.
  pushUserContext();
  void *other = rt.streamCreate();
  char *buffer = rt.memAlloc(64, other, false);
  rt.memset32(buffer, 1, 16, other);
  // CHECK-NEXT: over the caller's context: caller's current, 2 stacked
  sayContext("over the caller's context");
  // CHECK-NEXT: popped the caller's context: 0
  say("popped the caller's context: %d", popUserContext());
  // The stream made over the caller's context is the primary context's: the
  // driver accepts it with the primary current.
  rt.streamSynchronize(other);
  rt.memFree(buffer, other);
  rt.streamDestroy(other);
  rt.streamDestroy(stream);
  // CHECK-NEXT: driver errors: 0
  say("driver errors: %d", rt.errors());

  // At process exit a lowered module's destructor can unload its image after
  // the driver has shut down (seen on an H200): nothing to do or report, and
  // no abort under HOT_CUDA_ABORT_ON_ERROR (the RUN line sets it).
  shutDown();
  rt.moduleUnload((void *)&driver);
  // CHECK-NEXT: unloaded after the driver's shutdown
  say("unloaded after the driver's shutdown");
  // CHECK-NOT: hot_cuda_runtime
  return 0;
}
