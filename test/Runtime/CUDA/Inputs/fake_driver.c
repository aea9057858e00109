//===- fake_driver.c - A CUDA driver for testing the runtime on the host --===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
//===----------------------------------------------------------------------===//
//
// Built as libcuda.so.1 and found through LD_LIBRARY_PATH, this library stands
// in for the driver under libhot_cuda_runtime.so on a machine without a GPU.
// It implements the driver entry points the runtime calls with the rules of
// the driver API's documentation that the runtime must respect, and refuses
// what the real driver refuses with the same error codes:
//
// - one device (FAKE_CUDA_CC, default 90: sm_90, 132 SMs, 227 KiB of opt-in
//   shared memory per block) whose memory is FAKE_CUDA_MEMORY_BYTES (default
//   1 GiB) of host memory; device allocations past it fail with
//   CUDA_ERROR_OUT_OF_MEMORY, managed ones succeed, as on Linux, and count as
//   oversubscription; new allocations are filled with 0xA5 bytes; with
//   FAKE_CUDA_NO_DEVICE set, cuInit fails as on a machine without a GPU;
// - primary contexts, a per-thread context stack, and handles checked on use;
// - streams that queue their work (copies, memsets, launches) and run it only
//   when something waits for it (stream, event or context synchronization, a
//   wait on an event), so an event recorded behind queued work is not ready
//   until then; the legacy stream runs its work at once;
// - modules from cubin (ELF: the global functions, their `.nv.shared.<kernel>`
//   sizes and `.nv.info.<kernel>` parameter tables) or PTX (`.entry` names and
//   parameter lists), a fatbin by the cubin or PTX inside it; kernels are not
//   executed, launches are checked (block and grid limits, dynamic shared
//   memory against the function's opt-in attribute, cluster shapes, each
//   argument read for its parameter's size, and what looks like an address
//   must be one the device can reach) and recorded;
// - host registration of disjoint ranges; tensor maps checked against
//   cuTensorMapEncodeTiled's documented limits.
//
// With FAKE_CUDA_TRACE set, every call is logged on stderr; at exit, with
// FAKE_CUDA_SUMMARY set, one line sums up what the process left behind. The
// functions fakeCuda* give a test the same figures.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <elf.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ALLOCATIONS 4096
#define MAX_STREAMS 256
#define MAX_EVENTS 4096
#define MAX_MODULES 4096
#define MAX_QUEUED 256
#define MAX_REGISTERED 256
#define MAX_CONTEXT_DEPTH 16
#define DEFAULT_SHARED 49152
#define MAX_PARAMS 1024

struct CUctx_st {
  int device;
  int retained;
};

typedef enum { OP_COPY, OP_SET32, OP_SET16, OP_LAUNCH } OpKind;
typedef struct {
  OpKind kind;
  char *dst;
  const char *src;
  size_t count;
  unsigned value;
} Op;

struct CUstream_st {
  int live;
  int id;
  CUcontext context;
  Op queue[MAX_QUEUED];
  long long queued, done;
};

struct CUevent_st {
  int live;
  CUstream stream;
  long long position;
};

/// A kernel parameter as the image declares it: its byte offset in the
/// parameter buffer and its size.
typedef struct {
  unsigned offset, size;
} Param;

struct CUfunc_st {
  struct CUmod_st *module;
  char name[256];
  int paramCount; // -1 where the image does not say.
  Param *params;  // Owned; kept after unloading, as the module is.
  int staticShared;
  int maxDynamicShared;
  int nonPortableCluster;
};

struct CUmod_st {
  int live;
  int id;
  int functionCount, capacity;
  struct CUfunc_st *functions; // Grown while the image is read, then fixed.
};

typedef struct {
  char *base;
  size_t bytes;
  int managed;
  int live;
} Allocation;

typedef struct {
  char *base;
  size_t bytes;
  int live;
} Registration;

static struct {
  pthread_mutex_t mutex;
  int initialized;
  struct CUctx_st primary;
  Allocation allocations[MAX_ALLOCATIONS];
  int allocationCount;
  size_t capacity, deviceBytes, managedBytes, peakBytes;
  int oversubscribed;
  struct CUstream_st streams[MAX_STREAMS];
  struct CUevent_st events[MAX_EVENTS];
  struct CUmod_st *modules[MAX_MODULES]; // Kept after unloading.
  int moduleCount;
  Registration registered[MAX_REGISTERED];
  long long launches;
  long long allocationCalls[2]; // Successful calls: device, managed.
  int errors;
  char lastKernel[256];
  /// Set by fakeCudaShutDown.
  int shutDown;
} fake = {.mutex = PTHREAD_MUTEX_INITIALIZER};

static __thread CUcontext contextStack[MAX_CONTEXT_DEPTH];
static __thread int contextDepth;
/// A context of the caller's own (not the runtime's primary one), which a
/// test makes current to check that the runtime works in its primary context
/// and gives the caller's back.
static struct CUctx_st userContext = {0, 1};

static int envInt(const char *name, int fallback) {
  const char *value = getenv(name);
  return value ? atoi(value) : fallback;
}

static void trace(const char *format, ...) {
  if (!getenv("FAKE_CUDA_TRACE"))
    return;
  va_list args;
  va_start(args, format);
  fprintf(stderr, "fake_cuda: ");
  vfprintf(stderr, format, args);
  fprintf(stderr, "\n");
  va_end(args);
}

/// Calls per entry point (the names as cuda.h maps them: cuMemAlloc_v2...).
static struct {
  const char *name;
  long long calls;
} callCounts[64];

static void countCall(const char *name) {
  pthread_mutex_lock(&fake.mutex);
  int i = 0;
  while (i < 64 && callCounts[i].name && strcmp(callCounts[i].name, name))
    ++i;
  if (i < 64) {
    callCounts[i].name = name;
    ++callCounts[i].calls;
  }
  pthread_mutex_unlock(&fake.mutex);
}

/// Every error goes through here: counted, and traced with its reason.
static CUresult fail(CUresult result, const char *call, const char *why) {
  ++fake.errors;
  trace("%s: error %d: %s", call, (int)result, why);
  return result;
}

static CUcontext current(void) {
  return contextDepth ? contextStack[contextDepth - 1] : NULL;
}

static int ccMajor(void) { return envInt("FAKE_CUDA_CC", 90) / 10; }
static int ccMinor(void) { return envInt("FAKE_CUDA_CC", 90) % 10; }
static int optInShared(void) {
  return ccMajor() >= 9 ? 232448 : ccMinor() == 0 ? 166912 : 101376;
}

//===----------------------------------------------------------------------===//
// Initialization, devices, contexts, errors
//===----------------------------------------------------------------------===//

CUresult cuInit(unsigned flags) {
  countCall(__func__);
  pthread_mutex_lock(&fake.mutex);
  if (!fake.initialized) {
    fake.initialized = 1;
    const char *bytes = getenv("FAKE_CUDA_MEMORY_BYTES");
    fake.capacity = bytes ? strtoull(bytes, NULL, 10) : (size_t)1 << 30;
  }
  pthread_mutex_unlock(&fake.mutex);
  trace("cuInit(%u)", flags);
  if (getenv("FAKE_CUDA_NO_DEVICE"))
    return fail(CUDA_ERROR_NO_DEVICE, "cuInit", "FAKE_CUDA_NO_DEVICE is set");
  return flags ? fail(CUDA_ERROR_INVALID_VALUE, "cuInit", "flags must be 0")
               : CUDA_SUCCESS;
}

#define REQUIRE_INIT(call)                                                     \
  if (fake.shutDown)                                                           \
    return CUDA_ERROR_DEINITIALIZED;                                           \
  if (!fake.initialized)                                                       \
  return fail(CUDA_ERROR_NOT_INITIALIZED, call, "cuInit was not called")

CUresult cuDeviceGetCount(int *count) {
  countCall(__func__);
  REQUIRE_INIT("cuDeviceGetCount");
  *count = 1;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGet(CUdevice *device, int ordinal) {
  countCall(__func__);
  REQUIRE_INIT("cuDeviceGet");
  if (ordinal != 0)
    return fail(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGet", "one device");
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *value, CUdevice_attribute attribute,
                              CUdevice device) {
  countCall(__func__);
  REQUIRE_INIT("cuDeviceGetAttribute");
  if (device != 0)
    return fail(CUDA_ERROR_INVALID_DEVICE, "cuDeviceGetAttribute", "device");
  switch (attribute) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = ccMajor();
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = ccMinor();
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *value = optInShared();
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = ccMajor() >= 9 ? 132 : 108;
    break;
  default:
    trace("cuDeviceGetAttribute(%d): not modelled, 0", (int)attribute);
    *value = 0;
  }
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice device) {
  countCall(__func__);
  REQUIRE_INIT("cuDevicePrimaryCtxRetain");
  if (device != 0)
    return fail(CUDA_ERROR_INVALID_DEVICE, "cuDevicePrimaryCtxRetain", "dev");
  pthread_mutex_lock(&fake.mutex);
  ++fake.primary.retained;
  pthread_mutex_unlock(&fake.mutex);
  *context = &fake.primary;
  trace("cuDevicePrimaryCtxRetain = ctx");
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice device) {
  countCall(__func__);
  REQUIRE_INIT("cuDevicePrimaryCtxRelease");
  if (device != 0 || fake.primary.retained == 0)
    return fail(CUDA_ERROR_INVALID_CONTEXT, "cuDevicePrimaryCtxRelease",
                "not retained");
  pthread_mutex_lock(&fake.mutex);
  --fake.primary.retained;
  pthread_mutex_unlock(&fake.mutex);
  return CUDA_SUCCESS;
}

CUresult cuCtxPushCurrent(CUcontext context) {
  countCall(__func__);
  if (context != &fake.primary || fake.primary.retained == 0)
    return fail(CUDA_ERROR_INVALID_CONTEXT, "cuCtxPushCurrent", "context");
  if (contextDepth == MAX_CONTEXT_DEPTH)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuCtxPushCurrent",
                "context stack overflow (pushes without pops?)");
  contextStack[contextDepth++] = context;
  return CUDA_SUCCESS;
}

CUresult cuCtxPopCurrent(CUcontext *context) {
  countCall(__func__);
  if (contextDepth == 0)
    return fail(CUDA_ERROR_INVALID_CONTEXT, "cuCtxPopCurrent", "none current");
  CUcontext popped = contextStack[--contextDepth];
  if (context)
    *context = popped;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext context) {
  countCall(__func__);
  REQUIRE_INIT("cuCtxSetCurrent");
  if (context && (context != &fake.primary || fake.primary.retained == 0))
    return fail(CUDA_ERROR_INVALID_CONTEXT, "cuCtxSetCurrent", "context");
  if (!context) {
    if (contextDepth)
      --contextDepth;
  } else if (contextDepth) {
    contextStack[contextDepth - 1] = context;
  } else {
    contextStack[contextDepth++] = context;
  }
  return CUDA_SUCCESS;
}

CUresult cuCtxGetCurrent(CUcontext *context) {
  countCall(__func__);
  REQUIRE_INIT("cuCtxGetCurrent");
  *context = current();
  return CUDA_SUCCESS;
}

#define REQUIRE_CONTEXT(call)                                                  \
  REQUIRE_INIT(call);                                                          \
  if (!current())                                                              \
  return fail(CUDA_ERROR_INVALID_CONTEXT, call, "no current context")

static const struct {
  CUresult code;
  const char *name, *text;
} errorTable[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE",
     "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED,
     "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED",
     "part or all of the requested memory range is already mapped"},
    {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED,
     "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED",
     "pointer does not correspond to a registered memory region"},
    {CUDA_ERROR_INVALID_CLUSTER_SIZE, "CUDA_ERROR_INVALID_CLUSTER_SIZE",
     "invalid cluster size"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
     "operation not supported"},
};

CUresult cuGetErrorName(CUresult error, const char **name) {
  countCall(__func__);
  for (size_t i = 0; i < sizeof(errorTable) / sizeof(errorTable[0]); ++i)
    if (errorTable[i].code == error) {
      *name = errorTable[i].name;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **text) {
  countCall(__func__);
  for (size_t i = 0; i < sizeof(errorTable) / sizeof(errorTable[0]); ++i)
    if (errorTable[i].code == error) {
      *text = errorTable[i].text;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_VALUE;
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

/// Runs the work queued on `stream` (all of it: the fake has no concurrency).
static void runStream(CUstream stream) {
  for (; stream->done < stream->queued; ++stream->done) {
    Op *op = &stream->queue[stream->done % MAX_QUEUED];
    switch (op->kind) {
    case OP_COPY:
      memmove(op->dst, op->src, op->count);
      break;
    case OP_SET32:
      for (size_t i = 0; i < op->count; ++i)
        memcpy(op->dst + 4 * i, &op->value, 4);
      break;
    case OP_SET16:
      for (size_t i = 0; i < op->count; ++i)
        memcpy(op->dst + 2 * i, &op->value, 2);
      break;
    case OP_LAUNCH:
      break;
    }
  }
}

static void runAll(void) {
  for (int i = 0; i < MAX_STREAMS; ++i)
    if (fake.streams[i].live)
      runStream(&fake.streams[i]);
}

static int validStream(CUstream stream) {
  return !stream ||
         (stream >= fake.streams && stream < fake.streams + MAX_STREAMS &&
          stream->live && stream->context == current());
}

/// Queues `op` on `stream`, or runs it at once on the legacy stream (after
/// everything queued, as the legacy stream waits for blocking streams; ours
/// are all non-blocking, so only the order of this call matters).
static void enqueue(CUstream stream, Op op) {
  if (!stream) {
    struct CUstream_st once = {0};
    once.queue[0] = op;
    once.queued = 1;
    runStream(&once);
    return;
  }
  if (stream->queued - stream->done == MAX_QUEUED)
    runStream(stream); // A full queue drains, as a real one may.
  stream->queue[stream->queued++ % MAX_QUEUED] = op;
}

CUresult cuStreamCreate(CUstream *stream, unsigned flags) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuStreamCreate");
  if (flags & ~(unsigned)CU_STREAM_NON_BLOCKING)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuStreamCreate", "flags");
  pthread_mutex_lock(&fake.mutex);
  static int nextId = 1;
  for (int i = 0; i < MAX_STREAMS; ++i)
    if (!fake.streams[i].live) {
      memset(&fake.streams[i], 0, sizeof(fake.streams[i]));
      fake.streams[i].live = 1;
      fake.streams[i].id = nextId++;
      fake.streams[i].context = current();
      *stream = &fake.streams[i];
      pthread_mutex_unlock(&fake.mutex);
      trace("cuStreamCreate = stream%d", (*stream)->id);
      return CUDA_SUCCESS;
    }
  pthread_mutex_unlock(&fake.mutex);
  return fail(CUDA_ERROR_OUT_OF_MEMORY, "cuStreamCreate", "too many streams");
}

CUresult cuStreamDestroy(CUstream stream) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuStreamDestroy");
  if (!stream || !validStream(stream))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuStreamDestroy", "stream");
  pthread_mutex_lock(&fake.mutex);
  runStream(stream); // Queued work still completes.
  stream->live = 0;
  pthread_mutex_unlock(&fake.mutex);
  trace("cuStreamDestroy(stream%d)", stream->id);
  return CUDA_SUCCESS;
}

CUresult cuStreamGetCtx(CUstream stream, CUcontext *context) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuStreamGetCtx");
  if (!validStream(stream))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuStreamGetCtx", "stream");
  *context = stream ? stream->context : current();
  return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream stream) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuStreamSynchronize");
  if (!validStream(stream))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuStreamSynchronize", "stream");
  pthread_mutex_lock(&fake.mutex);
  if (stream)
    runStream(stream);
  else
    runAll();
  pthread_mutex_unlock(&fake.mutex);
  trace("cuStreamSynchronize(stream%d)", stream ? stream->id : 0);
  return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize(void) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuCtxSynchronize");
  pthread_mutex_lock(&fake.mutex);
  runAll();
  pthread_mutex_unlock(&fake.mutex);
  trace("cuCtxSynchronize");
  return CUDA_SUCCESS;
}

static int validEvent(CUevent event) {
  return event >= fake.events && event < fake.events + MAX_EVENTS &&
         event->live;
}

CUresult cuEventCreate(CUevent *event, unsigned flags) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuEventCreate");
  (void)flags;
  pthread_mutex_lock(&fake.mutex);
  for (int i = 0; i < MAX_EVENTS; ++i)
    if (!fake.events[i].live) {
      memset(&fake.events[i], 0, sizeof(fake.events[i]));
      fake.events[i].live = 1;
      *event = &fake.events[i];
      pthread_mutex_unlock(&fake.mutex);
      return CUDA_SUCCESS;
    }
  pthread_mutex_unlock(&fake.mutex);
  return fail(CUDA_ERROR_OUT_OF_MEMORY, "cuEventCreate", "too many events");
}

CUresult cuEventDestroy(CUevent event) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuEventDestroy");
  if (!validEvent(event))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuEventDestroy", "event");
  event->live = 0;
  return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent event, CUstream stream) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuEventRecord");
  if (!validEvent(event) || !validStream(stream))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuEventRecord", "event or stream");
  event->stream = stream;
  event->position = stream ? stream->queued : 0;
  trace("cuEventRecord(stream%d, after %lld queued)", stream ? stream->id : 0,
        stream ? stream->queued - stream->done : 0LL);
  return CUDA_SUCCESS;
}

static int eventDone(CUevent event) {
  return !event->stream || !event->stream->live ||
         event->stream->done >= event->position;
}

CUresult cuEventQuery(CUevent event) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuEventQuery");
  if (!validEvent(event))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuEventQuery", "event");
  return eventDone(event) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult cuEventSynchronize(CUevent event) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuEventSynchronize");
  if (!validEvent(event))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuEventSynchronize", "event");
  pthread_mutex_lock(&fake.mutex);
  if (!eventDone(event))
    runStream(event->stream);
  pthread_mutex_unlock(&fake.mutex);
  return CUDA_SUCCESS;
}

CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned flags) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuStreamWaitEvent");
  if (!validEvent(event) || !validStream(stream) || flags)
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuStreamWaitEvent", "arguments");
  // Work queued on `stream` after this point runs after the event: running
  // the event's stream now keeps that order.
  pthread_mutex_lock(&fake.mutex);
  if (!eventDone(event))
    runStream(event->stream);
  pthread_mutex_unlock(&fake.mutex);
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

static Allocation *findAllocation(const void *pointer, size_t bytes) {
  const char *p = (const char *)pointer;
  for (int i = 0; i < fake.allocationCount; ++i) {
    Allocation *a = &fake.allocations[i];
    if (a->live && p >= a->base && p + bytes <= a->base + a->bytes)
      return a;
  }
  return NULL;
}

static CUresult allocate(CUdeviceptr *pointer, size_t bytes, int managed,
                         const char *call) {
  REQUIRE_CONTEXT(call);
  if (bytes == 0)
    return fail(CUDA_ERROR_INVALID_VALUE, call, "0 bytes");
  pthread_mutex_lock(&fake.mutex);
  size_t used = fake.deviceBytes + fake.managedBytes;
  if (!managed && used + bytes > fake.capacity) {
    pthread_mutex_unlock(&fake.mutex);
    trace("%s(%zu): %zu of %zu bytes in use", call, bytes, used, fake.capacity);
    return fail(CUDA_ERROR_OUT_OF_MEMORY, call, "device memory exhausted");
  }
  int slot = -1;
  for (int i = 0; i < fake.allocationCount && slot < 0; ++i)
    if (!fake.allocations[i].live)
      slot = i;
  if (slot < 0 && fake.allocationCount < MAX_ALLOCATIONS)
    slot = fake.allocationCount++;
  // 256-byte aligned, as the driver's allocations are.
  size_t rounded = (bytes + 255) / 256 * 256;
  char *base = slot < 0 ? NULL : aligned_alloc(256, rounded);
  if (!base) {
    pthread_mutex_unlock(&fake.mutex);
    return fail(CUDA_ERROR_OUT_OF_MEMORY, call, "host memory or slots");
  }
  memset(base, 0xA5, bytes);
  fake.allocations[slot] = (Allocation){base, bytes, managed, 1};
  ++fake.allocationCalls[managed != 0];
  if (managed) {
    fake.managedBytes += bytes;
    if (used + bytes > fake.capacity) {
      ++fake.oversubscribed;
      trace("%s(%zu): oversubscribed: %zu of %zu bytes in use", call, bytes,
            used + bytes, fake.capacity);
    }
  } else {
    fake.deviceBytes += bytes;
  }
  if (used + bytes > fake.peakBytes)
    fake.peakBytes = used + bytes;
  pthread_mutex_unlock(&fake.mutex);
  *pointer = (CUdeviceptr)base;
  trace("%s(%zu) = mem%d", call, bytes, slot);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr *pointer, size_t bytes) {
  countCall(__func__);
  return allocate(pointer, bytes, 0, "cuMemAlloc");
}

CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes, unsigned flags) {
  countCall(__func__);
  if (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuMemAllocManaged", "flags");
  return allocate(pointer, bytes, 1, "cuMemAllocManaged");
}

CUresult cuMemFree(CUdeviceptr pointer) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuMemFree");
  pthread_mutex_lock(&fake.mutex);
  Allocation *a = findAllocation((void *)pointer, 1);
  if (!a || a->base != (char *)pointer) {
    pthread_mutex_unlock(&fake.mutex);
    return fail(CUDA_ERROR_INVALID_VALUE, "cuMemFree",
                "not the start of a live allocation");
  }
  // cuMemFree waits for the device's work first.
  runAll();
  *(a->managed ? &fake.managedBytes : &fake.deviceBytes) -= a->bytes;
  a->live = 0;
  free(a->base);
  int slot = (int)(a - fake.allocations);
  pthread_mutex_unlock(&fake.mutex);
  trace("cuMemFree(mem%d)", slot);
  return CUDA_SUCCESS;
}

CUresult cuMemGetInfo(size_t *freeBytes, size_t *totalBytes) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuMemGetInfo");
  pthread_mutex_lock(&fake.mutex);
  size_t used = fake.deviceBytes + fake.managedBytes;
  *freeBytes = used < fake.capacity ? fake.capacity - used : 0;
  *totalBytes = fake.capacity;
  pthread_mutex_unlock(&fake.mutex);
  return CUDA_SUCCESS;
}

/// Device-side addresses: inside a live allocation, or registered host
/// memory (which the device may address with unified addressing).
static int deviceAddressable(const void *pointer, size_t bytes) {
  if (findAllocation(pointer, bytes))
    return 1;
  const char *p = (const char *)pointer;
  for (int i = 0; i < MAX_REGISTERED; ++i) {
    Registration *r = &fake.registered[i];
    if (r->live && p >= r->base && p + bytes <= r->base + r->bytes)
      return 1;
  }
  return 0;
}

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       CUstream stream) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuMemcpyAsync");
  if (!validStream(stream))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuMemcpyAsync", "stream");
  // Unified addressing: any host pointer is a valid source or destination of
  // cuMemcpy; the fake checks only that device ranges stay inside their
  // allocation.
  pthread_mutex_lock(&fake.mutex);
  Allocation *d = findAllocation((void *)dst, 1);
  Allocation *s = findAllocation((void *)src, 1);
  int outside = (d && !findAllocation((void *)dst, bytes)) ||
                (s && !findAllocation((void *)src, bytes));
  if (!outside)
    enqueue(stream, (Op){OP_COPY, (char *)dst, (const char *)src, bytes, 0});
  pthread_mutex_unlock(&fake.mutex);
  if (outside)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuMemcpyAsync",
                "range runs past its allocation");
  trace("cuMemcpyAsync(%zu bytes, stream%d)", bytes, stream ? stream->id : 0);
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t bytes) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuMemcpyHtoD");
  pthread_mutex_lock(&fake.mutex);
  int ok = findAllocation((void *)dst, bytes) != NULL;
  if (ok) {
    runAll(); // Synchronous with respect to the host and earlier work.
    memcpy((void *)dst, src, bytes);
  }
  pthread_mutex_unlock(&fake.mutex);
  return ok ? CUDA_SUCCESS
            : fail(CUDA_ERROR_INVALID_VALUE, "cuMemcpyHtoD",
                   "destination is not device memory");
}

static CUresult fill(CUdeviceptr dst, unsigned value, size_t count,
                     size_t width, CUstream stream, const char *call) {
  REQUIRE_CONTEXT(call);
  if (!validStream(stream))
    return fail(CUDA_ERROR_INVALID_HANDLE, call, "stream");
  if (dst % width)
    return fail(CUDA_ERROR_INVALID_VALUE, call, "misaligned destination");
  pthread_mutex_lock(&fake.mutex);
  int ok = deviceAddressable((void *)dst, count * width);
  if (ok)
    enqueue(stream, (Op){width == 4 ? OP_SET32 : OP_SET16, (char *)dst, NULL,
                         count, value});
  pthread_mutex_unlock(&fake.mutex);
  if (!ok)
    return fail(CUDA_ERROR_INVALID_VALUE, call, "range is not device memory");
  trace("%s(%zu, stream%d)", call, count, stream ? stream->id : 0);
  return CUDA_SUCCESS;
}

CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned value, size_t count,
                          CUstream stream) {
  countCall(__func__);
  return fill(dst, value, count, 4, stream, "cuMemsetD32Async");
}

CUresult cuMemsetD16Async(CUdeviceptr dst, unsigned short value, size_t count,
                          CUstream stream) {
  countCall(__func__);
  return fill(dst, value, count, 2, stream, "cuMemsetD16Async");
}

CUresult cuMemHostRegister(void *pointer, size_t bytes, unsigned flags) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuMemHostRegister");
  (void)flags;
  if (!pointer || bytes == 0)
    return fail(CUDA_ERROR_INVALID_VALUE, "cuMemHostRegister", "empty range");
  char *p = (char *)pointer;
  pthread_mutex_lock(&fake.mutex);
  int free = -1, overlap = 0;
  for (int i = 0; i < MAX_REGISTERED; ++i) {
    Registration *r = &fake.registered[i];
    if (!r->live) {
      if (free < 0)
        free = i;
    } else if (p < r->base + r->bytes && r->base < p + bytes) {
      overlap = 1;
    }
  }
  if (!overlap && free >= 0)
    fake.registered[free] = (Registration){p, bytes, 1};
  pthread_mutex_unlock(&fake.mutex);
  if (overlap)
    return fail(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "cuMemHostRegister",
                "overlaps a registered range");
  if (free < 0)
    return fail(CUDA_ERROR_OUT_OF_MEMORY, "cuMemHostRegister", "slots");
  trace("cuMemHostRegister(%zu bytes)", bytes);
  return CUDA_SUCCESS;
}

CUresult cuMemHostUnregister(void *pointer) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuMemHostUnregister");
  pthread_mutex_lock(&fake.mutex);
  int found = 0;
  for (int i = 0; i < MAX_REGISTERED && !found; ++i)
    if (fake.registered[i].live && fake.registered[i].base == pointer) {
      fake.registered[i].live = 0;
      found = 1;
    }
  pthread_mutex_unlock(&fake.mutex);
  if (!found)
    return fail(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "cuMemHostUnregister",
                "not the start of a registered range");
  trace("cuMemHostUnregister");
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Modules and functions
//===----------------------------------------------------------------------===//

static struct CUfunc_st *addFunction(struct CUmod_st *module, const char *name,
                                     size_t length) {
  if (length >= sizeof(module->functions[0].name))
    return NULL;
  if (module->functionCount == module->capacity) {
    int capacity = module->capacity ? 2 * module->capacity : 16;
    struct CUfunc_st *grown =
        realloc(module->functions, capacity * sizeof(struct CUfunc_st));
    if (!grown)
      return NULL;
    module->functions = grown;
    module->capacity = capacity;
  }
  struct CUfunc_st *f = &module->functions[module->functionCount++];
  memset(f, 0, sizeof(*f));
  memcpy(f->name, name, length);
  f->name[length] = 0;
  f->paramCount = -1;
  return f;
}

/// Records parameter `ordinal` of `f`; 0 when the table cannot hold it.
static int addParam(struct CUfunc_st *f, unsigned ordinal, unsigned offset,
                    unsigned size) {
  if (ordinal >= MAX_PARAMS)
    return 0;
  if (!f->params && !(f->params = calloc(MAX_PARAMS, sizeof(Param))))
    return 0;
  f->params[ordinal] = (Param){offset, size};
  if ((int)ordinal >= f->paramCount)
    f->paramCount = (int)ordinal + 1;
  return 1;
}

/// The attributes of `.nv.info.<kernel>` that describe its parameters: each
/// entry is a format byte, an attribute byte, then either a 2-byte value or
/// (format EIFMT_SVAL) a 2-byte size and that many bytes. EIATTR_KPARAM_INFO
/// holds {u32 index, u16 ordinal, u16 offset, u32 flags with the size in its
/// top 14 bits}. A kernel's section without such entries has no parameters.
static int readParamInfo(struct CUfunc_st *f, const unsigned char *info,
                         size_t size) {
  enum { EIFMT_SVAL = 4, EIATTR_KPARAM_INFO = 0x17 };
  f->paramCount = 0;
  for (size_t at = 0; at + 4 <= size;) {
    unsigned format = info[at], attribute = info[at + 1];
    uint16_t length = 0;
    if (format == EIFMT_SVAL)
      memcpy(&length, info + at + 2, sizeof(length));
    const unsigned char *value = info + at + 4;
    at += 4 + length;
    if (at > size)
      return 0;
    if (format != EIFMT_SVAL || attribute != EIATTR_KPARAM_INFO)
      continue;
    uint16_t ordinal, offset;
    uint32_t flags;
    if (length < 12)
      return 0;
    memcpy(&ordinal, value + 4, sizeof(ordinal));
    memcpy(&offset, value + 6, sizeof(offset));
    memcpy(&flags, value + 8, sizeof(flags));
    if (!addParam(f, ordinal, offset, flags >> 18))
      return 0;
  }
  return 1;
}

/// The parameter list of a PTX `.entry`, from its opening parenthesis: each
/// `.param [.align A] .<type><bits> name[[count]]`, laid out at its
/// alignment (A, else its type's size). An `.align` after `.ptr` is the
/// pointee's, not the parameter's.
static int readPtxParams(struct CUfunc_st *f, const char *list) {
  f->paramCount = 0;
  const char *end = strchr(list, ')');
  if (*list != '(' || !end)
    return 1; // `.entry name` without a list: no parameters.
  unsigned offset = 0, ordinal = 0;
  for (const char *p = strstr(list, ".param"); p && p < end;
       p = strstr(p + 6, ".param")) {
    const char *stop = memchr(p, ',', end - p);
    if (!stop)
      stop = end;
    unsigned align = 0, element = 0, count = 1;
    int pointer = 0;
    for (const char *t = p + 6; t < stop; ++t) {
      if (*t == '[') {
        count = (unsigned)strtoul(t + 1, NULL, 10);
      } else if (*t != '.') {
        continue;
      } else if (!strncmp(t, ".ptr", 4)) {
        pointer = 1;
      } else if (!strncmp(t, ".align", 6)) {
        if (!pointer)
          align = (unsigned)strtoul(t + 6, NULL, 10);
      } else if (!element && t[1] && strchr("usbf", t[1]) && t[2] >= '1' &&
                 t[2] <= '9') {
        element = (unsigned)strtoul(t + 2, NULL, 10) / 8;
      }
    }
    if (!element)
      return 0;
    if (!align)
      align = element;
    offset = (offset + align - 1) / align * align;
    if (!addParam(f, ordinal++, offset, element * count))
      return 0;
    offset += element * count;
  }
  return 1;
}

static struct CUfunc_st *lookup(struct CUmod_st *module, const char *name) {
  for (int i = 0; i < module->functionCount; ++i)
    if (!strcmp(module->functions[i].name, name))
      return &module->functions[i];
  return NULL;
}

/// A cubin: its global function symbols are the kernels, and the size of
/// section `.nv.shared.<kernel>` is a kernel's static shared memory.
static int readCubin(struct CUmod_st *module, const unsigned char *image) {
  const Elf64_Ehdr *header = (const Elf64_Ehdr *)image;
  if (header->e_ident[EI_CLASS] != ELFCLASS64 ||
      header->e_shentsize != sizeof(Elf64_Shdr))
    return 0;
  const Elf64_Shdr *sections = (const Elf64_Shdr *)(image + header->e_shoff);
  const char *sectionNames =
      (const char *)image + sections[header->e_shstrndx].sh_offset;
  for (int s = 0; s < header->e_shnum; ++s) {
    if (sections[s].sh_type != SHT_SYMTAB)
      continue;
    const Elf64_Sym *symbols =
        (const Elf64_Sym *)(image + sections[s].sh_offset);
    const char *names =
        (const char *)image + sections[sections[s].sh_link].sh_offset;
    size_t count = sections[s].sh_size / sizeof(Elf64_Sym);
    for (size_t i = 0; i < count; ++i)
      if (ELF64_ST_TYPE(symbols[i].st_info) == STT_FUNC &&
          ELF64_ST_BIND(symbols[i].st_info) == STB_GLOBAL) {
        const char *name = names + symbols[i].st_name;
        if (!addFunction(module, name, strlen(name)))
          return 0;
      }
  }
  for (int s = 0; s < header->e_shnum; ++s) {
    const char *name = sectionNames + sections[s].sh_name;
    if (!strncmp(name, ".nv.shared.", 11)) {
      struct CUfunc_st *f = lookup(module, name + 11);
      if (f)
        f->staticShared = (int)sections[s].sh_size;
    } else if (!strncmp(name, ".nv.info.", 9)) {
      struct CUfunc_st *f = lookup(module, name + 9);
      if (f &&
          !readParamInfo(f, image + sections[s].sh_offset, sections[s].sh_size))
        return 0;
    }
  }
  return module->functionCount > 0;
}

/// PTX text: each `.entry <name>` is a kernel (static shared memory is not
/// read from PTX: 0).
static int readPtx(struct CUmod_st *module, const char *text) {
  for (const char *p = strstr(text, ".entry"); p; p = strstr(p + 6, ".entry")) {
    const char *name = p + 6;
    while (*name == ' ' || *name == '\t')
      ++name;
    size_t length = strcspn(name, " \t\r\n(");
    struct CUfunc_st *f = length ? addFunction(module, name, length) : NULL;
    if (length && !f)
      return 0;
    const char *list = name + length;
    while (*list == ' ' || *list == '\t' || *list == '\r' || *list == '\n')
      ++list;
    if (f && !readPtxParams(f, list))
      return 0;
  }
  return module->functionCount > 0;
}

static const unsigned char *findBytes(const unsigned char *begin, size_t size,
                                      const char *needle, size_t length) {
  for (size_t i = 0; i + length <= size; ++i)
    if (!memcmp(begin + i, needle, length))
      return begin + i;
  return NULL;
}

/// A fatbin: the first cubin inside it, else its PTX (uncompressed only).
static int readFatbin(struct CUmod_st *module, const unsigned char *image) {
  uint64_t size;
  memcpy(&size, image + 8, sizeof(size));
  const unsigned char *body = image + 16;
  const unsigned char *elf = findBytes(body, size, "\177ELF", 4);
  if (elf)
    return readCubin(module, elf);
  const unsigned char *ptx = findBytes(body, size, ".version", 8);
  return ptx && readPtx(module, (const char *)ptx);
}

static CUresult loadModule(CUmodule *result, const void *image,
                           const char *call) {
  REQUIRE_CONTEXT(call);
  const unsigned char *bytes = (const unsigned char *)image;
  pthread_mutex_lock(&fake.mutex);
  struct CUmod_st *module = fake.moduleCount < MAX_MODULES
                                ? calloc(1, sizeof(struct CUmod_st))
                                : NULL;
  if (!module) {
    pthread_mutex_unlock(&fake.mutex);
    return fail(CUDA_ERROR_OUT_OF_MEMORY, call, "too many modules");
  }
  uint32_t magic;
  memcpy(&magic, bytes, sizeof(magic));
  int ok = !memcmp(bytes, "\177ELF", 4) ? readCubin(module, bytes)
           : magic == 0xBA55ED50u       ? readFatbin(module, bytes)
           : strstr((const char *)bytes, ".version") != NULL
               ? readPtx(module, (const char *)bytes)
               : 0;
  if (ok) {
    // The handles point into the array from now on: set their module.
    for (int i = 0; i < module->functionCount; ++i)
      module->functions[i].module = module;
    module->live = 1;
    module->id = fake.moduleCount + 1;
    fake.modules[fake.moduleCount++] = module;
  } else {
    free(module->functions);
    free(module);
  }
  pthread_mutex_unlock(&fake.mutex);
  if (!ok)
    return fail(CUDA_ERROR_INVALID_IMAGE, call,
                "neither a cubin, a fatbin nor PTX with a kernel");
  *result = module;
  trace("%s = module%d with %d kernels", call, module->id,
        module->functionCount);
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image) {
  countCall(__func__);
  return loadModule(module, image, "cuModuleLoadData");
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned count,
                            CUjit_option *options, void **values) {
  countCall(__func__);
  (void)count, (void)options, (void)values;
  return loadModule(module, image, "cuModuleLoadDataEx");
}

static int validModule(CUmodule module) {
  for (int i = 0; i < fake.moduleCount; ++i)
    if (fake.modules[i] == module)
      return module->live;
  return 0;
}

CUresult cuModuleUnload(CUmodule module) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuModuleUnload");
  if (!validModule(module))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleUnload", "module");
  module->live = 0;
  trace("cuModuleUnload(module%d)", module->id);
  return CUDA_SUCCESS;
}

CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                             const char *name) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuModuleGetFunction");
  if (!validModule(module))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuModuleGetFunction", "module");
  struct CUfunc_st *f = lookup(module, name);
  if (!f)
    return fail(CUDA_ERROR_NOT_FOUND, "cuModuleGetFunction", name);
  *function = f;
  return CUDA_SUCCESS;
}

static int validFunction(CUfunction f) {
  return f && validModule(f->module) && f >= f->module->functions &&
         f < f->module->functions + f->module->functionCount;
}

CUresult cuFuncGetAttribute(int *value, CUfunction_attribute attribute,
                            CUfunction f) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuFuncGetAttribute");
  if (!validFunction(f))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuFuncGetAttribute", "function");
  switch (attribute) {
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    *value = f->staticShared;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    *value = f->maxDynamicShared ? f->maxDynamicShared
                                 : DEFAULT_SHARED - f->staticShared;
    return CUDA_SUCCESS;
  default:
    return fail(CUDA_ERROR_INVALID_VALUE, "cuFuncGetAttribute",
                "attribute not modelled");
  }
}

CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute attribute,
                            int value) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuFuncSetAttribute");
  if (!validFunction(f))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuFuncSetAttribute", "function");
  switch (attribute) {
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    if (value < 0 || value + f->staticShared > optInShared())
      return fail(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute",
                  "dynamic plus static shared memory over the opt-in limit");
    f->maxDynamicShared = value;
    break;
  case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    if (ccMajor() < 9)
      return fail(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute",
                  "clusters need sm_90");
    f->nonPortableCluster = value != 0;
    break;
  default:
    return fail(CUDA_ERROR_INVALID_VALUE, "cuFuncSetAttribute",
                "attribute not modelled");
  }
  trace("cuFuncSetAttribute(%s, %d, %d)", f->name, (int)attribute, value);
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

CUresult cuFuncGetName(const char **name, CUfunction f) {
  countCall(__func__);
  if (!validFunction(f))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuFuncGetName", "function");
  *name = f->name;
  return CUDA_SUCCESS;
}

CUresult cuFuncGetParamInfo(CUfunction f, size_t index, size_t *offset,
                            size_t *size) {
  countCall(__func__);
  REQUIRE_CONTEXT("cuFuncGetParamInfo");
  if (!validFunction(f))
    return fail(CUDA_ERROR_INVALID_HANDLE, "cuFuncGetParamInfo", "function");
  if (f->paramCount < 0)
    return fail(CUDA_ERROR_NOT_SUPPORTED, "cuFuncGetParamInfo",
                "the image has no parameter table");
  // Asking past the last parameter is how a caller learns the count: the
  // documented answer, not counted as an error.
  if (index >= (size_t)f->paramCount)
    return CUDA_ERROR_INVALID_VALUE;
  *offset = f->params[index].offset;
  *size = f->params[index].size;
  return CUDA_SUCCESS;
}

/// The arguments against the image's parameter table. Each is read for its
/// parameter's size (a short `params` array shows as a crash here, not as
/// garbage on a GPU), and an 8-byte value in [2^40, 2^48), where this
/// process's heap, mappings and stacks lie (sizes and strides stay far
/// below), is taken for an address the kernel will dereference: it must be
/// device memory (a live allocation or one past its end) or registered host
/// memory, else the launch fails as the kernel would fault.
static CUresult checkParams(CUfunction f, void **params, void **extra,
                            const char *call) {
  if (f->paramCount <= 0 || extra)
    return CUDA_SUCCESS;
  if (!params)
    return fail(CUDA_ERROR_INVALID_VALUE, call,
                "the kernel has parameters and none were given");
  for (int i = 0; i < f->paramCount; ++i) {
    unsigned char value[64];
    unsigned size = f->params[i].size;
    for (unsigned at = 0; at < size; at += sizeof(value))
      memcpy(value, (const char *)params[i] + at,
             size - at < sizeof(value) ? size - at : sizeof(value));
    if (size != 8)
      continue;
    uint64_t address;
    memcpy(&address, params[i], sizeof(address));
    if (address < (1ull << 40) || address >= (1ull << 48))
      continue;
    pthread_mutex_lock(&fake.mutex);
    int reachable = deviceAddressable((const void *)(uintptr_t)address, 0);
    pthread_mutex_unlock(&fake.mutex);
    if (!reachable) {
      char why[400];
      snprintf(why, sizeof(why),
               "parameter %d of %s (%#llx) is host memory the device cannot "
               "address",
               i, f->name, (unsigned long long)address);
      return fail(CUDA_ERROR_ILLEGAL_ADDRESS, call, why);
    }
  }
  return CUDA_SUCCESS;
}

static CUresult checkLaunch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                            unsigned bx, unsigned by, unsigned bz,
                            unsigned shared, CUstream stream, void **params,
                            void **extra, const char *call) {
  REQUIRE_CONTEXT(call);
  if (!validFunction(f))
    return fail(CUDA_ERROR_INVALID_HANDLE, call, "function");
  if (!validStream(stream))
    return fail(CUDA_ERROR_INVALID_HANDLE, call, "stream");
  if (params && extra)
    return fail(CUDA_ERROR_INVALID_VALUE, call, "both params and extra");
  if (!bx || !by || !bz || bx > 1024 || by > 1024 || bz > 64 ||
      (unsigned long long)bx * by * bz > 1024)
    return fail(CUDA_ERROR_INVALID_VALUE, call, "block dimensions");
  if (!gx || !gy || !gz || gx > 2147483647u || gy > 65535 || gz > 65535)
    return fail(CUDA_ERROR_INVALID_VALUE, call, "grid dimensions");
  int limit = f->maxDynamicShared ? f->maxDynamicShared
                                  : DEFAULT_SHARED - f->staticShared;
  if ((int)shared > limit)
    return fail(CUDA_ERROR_INVALID_VALUE, call,
                "dynamic shared memory over the function's limit "
                "(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  return checkParams(f, params, extra, call);
}

static void recordLaunch(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                         unsigned bx, unsigned by, unsigned bz, unsigned shared,
                         CUstream stream) {
  pthread_mutex_lock(&fake.mutex);
  ++fake.launches;
  snprintf(fake.lastKernel, sizeof(fake.lastKernel), "%s", f->name);
  enqueue(stream, (Op){OP_LAUNCH, NULL, NULL, 0, 0});
  pthread_mutex_unlock(&fake.mutex);
  trace("launch %s grid (%u,%u,%u) block (%u,%u,%u) smem %u stream%d", f->name,
        gx, gy, gz, bx, by, bz, shared, stream ? stream->id : 0);
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        CUstream stream, void **params, void **extra) {
  countCall(__func__);
  CUresult result = checkLaunch(f, gx, gy, gz, bx, by, bz, shared, stream,
                                params, extra, "cuLaunchKernel");
  if (result == CUDA_SUCCESS)
    recordLaunch(f, gx, gy, gz, bx, by, bz, shared, stream);
  return result;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                          void **params, void **extra) {
  countCall(__func__);
  CUresult result =
      checkLaunch(f, config->gridDimX, config->gridDimY, config->gridDimZ,
                  config->blockDimX, config->blockDimY, config->blockDimZ,
                  config->sharedMemBytes, config->hStream, params, extra,
                  "cuLaunchKernelEx");
  if (result != CUDA_SUCCESS)
    return result;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const CUlaunchAttribute *a = &config->attrs[i];
    if (a->id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
      return fail(CUDA_ERROR_INVALID_VALUE, "cuLaunchKernelEx",
                  "attribute not modelled");
    unsigned cx = a->value.clusterDim.x, cy = a->value.clusterDim.y,
             cz = a->value.clusterDim.z;
    unsigned size = cx * cy * cz;
    if (ccMajor() < 9 || !cx || !cy || !cz || config->gridDimX % cx ||
        config->gridDimY % cy || config->gridDimZ % cz)
      return fail(CUDA_ERROR_INVALID_CLUSTER_SIZE, "cuLaunchKernelEx",
                  "cluster does not divide the grid (or no sm_90)");
    if (size > 16 || (size > 8 && !f->nonPortableCluster))
      return fail(CUDA_ERROR_INVALID_CLUSTER_SIZE, "cuLaunchKernelEx",
                  "more than 8 blocks without the non-portable attribute");
  }
  recordLaunch(f, config->gridDimX, config->gridDimY, config->gridDimZ,
               config->blockDimX, config->blockDimY, config->blockDimZ,
               config->sharedMemBytes, config->hStream);
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// Tensor maps
//===----------------------------------------------------------------------===//

CUresult cuTensorMapEncodeTiled(
    CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *address,
    const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box,
    const cuuint32_t *elementStrides, CUtensorMapInterleave interleave,
    CUtensorMapSwizzle swizzle, CUtensorMapL2promotion promotion,
    CUtensorMapFloatOOBfill fill) {
  countCall(__func__);
  (void)promotion, (void)fill;
  static const int bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  const char *call = "cuTensorMapEncodeTiled";
  if ((unsigned)type >= sizeof(bytes) / sizeof(bytes[0]) || rank < 1 ||
      rank > 5)
    return fail(CUDA_ERROR_INVALID_VALUE, call, "type or rank");
  if ((uintptr_t)address % 16)
    return fail(CUDA_ERROR_INVALID_VALUE, call, "address not 16-byte aligned");
  for (cuuint32_t i = 0; i < rank; ++i) {
    if (!dims[i] || dims[i] > ((cuuint64_t)1 << 32))
      return fail(CUDA_ERROR_INVALID_VALUE, call, "global dimension");
    if (!box[i] || box[i] > 256)
      return fail(CUDA_ERROR_INVALID_VALUE, call, "box dimension");
    if (!elementStrides[i] || elementStrides[i] > 8)
      return fail(CUDA_ERROR_INVALID_VALUE, call, "element stride");
    if (i + 1 < rank &&
        (strides[i] % 16 || strides[i] >= ((cuuint64_t)1 << 40)))
      return fail(CUDA_ERROR_INVALID_VALUE, call,
                  "global stride not a multiple of 16 below 2^40");
  }
  size_t inner = (size_t)box[0] * bytes[type];
  if (interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && inner % 16)
    return fail(CUDA_ERROR_INVALID_VALUE, call,
                "inner box dimension not a multiple of 16 bytes");
  size_t span = swizzle == CU_TENSOR_MAP_SWIZZLE_32B    ? 32
                : swizzle == CU_TENSOR_MAP_SWIZZLE_64B  ? 64
                : swizzle == CU_TENSOR_MAP_SWIZZLE_128B ? 128
                                                        : 0;
  if (interleave == CU_TENSOR_MAP_INTERLEAVE_NONE && span && inner > span)
    return fail(CUDA_ERROR_INVALID_VALUE, call,
                "inner box dimension wider than the swizzle span");
  memset(map, 0, sizeof(*map));
  trace("cuTensorMapEncodeTiled(rank %u, type %d, box[0] %u, swizzle %d)", rank,
        (int)type, box[0], (int)swizzle);
  return CUDA_SUCCESS;
}

//===----------------------------------------------------------------------===//
// What a test asks the fake
//===----------------------------------------------------------------------===//

/// "name=calls name=calls ...": every entry point called so far.
const char *fakeCudaCallCounts(void) {
  static char text[4096];
  size_t used = 0;
  text[0] = 0;
  for (int i = 0; i < 64 && callCounts[i].name && used < sizeof(text); ++i)
    used += snprintf(text + used, sizeof(text) - used, "%s%s=%lld",
                     i ? " " : "", callCounts[i].name, callCounts[i].calls);
  return text;
}

/// Makes the caller's own context current on this thread (pushes it).
void fakeCudaPushUserContext(void) {
  contextStack[contextDepth++] = &userContext;
}

/// Pops the caller's own context, which must be current: 0 on success.
/// The driver shuts down, as it does at process exit before the destructors
/// of libraries loaded later: every call answers CUDA_ERROR_DEINITIALIZED.
void fakeCudaShutDown(void) { fake.shutDown = 1; }

int fakeCudaPopUserContext(void) {
  if (!contextDepth || contextStack[contextDepth - 1] != &userContext)
    return 1;
  --contextDepth;
  return 0;
}

/// The calling thread's current context: 0 none, 1 the primary, 2 the
/// caller's own; and how many are stacked.
int fakeCudaCurrentContext(int *depth) {
  if (depth)
    *depth = contextDepth;
  CUcontext context = current();
  return !context ? 0 : context == &fake.primary ? 1 : 2;
}

int fakeCudaLiveAllocations(void) {
  int live = 0;
  for (int i = 0; i < fake.allocationCount; ++i)
    live += fake.allocations[i].live;
  return live;
}
size_t fakeCudaBytesInUse(void) { return fake.deviceBytes + fake.managedBytes; }
size_t fakeCudaPeakBytes(void) { return fake.peakBytes; }
long long fakeCudaLaunches(void) { return fake.launches; }
long long fakeCudaDeviceAllocationCalls(void) {
  return fake.allocationCalls[0];
}
long long fakeCudaManagedAllocationCalls(void) {
  return fake.allocationCalls[1];
}
int fakeCudaErrors(void) { return fake.errors; }
int fakeCudaOversubscribed(void) { return fake.oversubscribed; }
const char *fakeCudaLastKernel(void) { return fake.lastKernel; }

__attribute__((destructor)) static void summary(void) {
  if (!getenv("FAKE_CUDA_SUMMARY"))
    return;
  int streams = 0;
  for (int i = 0; i < MAX_STREAMS; ++i)
    streams += fake.streams[i].live;
  fprintf(stderr,
          "fake_cuda: summary: %lld launches, %d errors, %lld device and %lld "
          "managed allocations, %d live (%zu bytes), peak %zu bytes, %d "
          "oversubscribed, %d live streams\n",
          fake.launches, fake.errors, fake.allocationCalls[0],
          fake.allocationCalls[1], fakeCudaLiveAllocations(),
          fakeCudaBytesInUse(), fake.peakBytes, fake.oversubscribed, streams);
}
