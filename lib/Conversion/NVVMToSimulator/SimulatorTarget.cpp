//===- SimulatorTarget.cpp - #hot.simulator compiles gpu.modules ----------===//
//
// Part of the hot project: HOT (Hadamard-based Optimized Training) in MLIR.
//
// gpu::TargetAttrInterface for #hot.simulator: a gpu.module (NVVM kernels)
// becomes a host shared object. A copy of the module goes through
// convertNVVMToSimulator, is translated to LLVM IR for the host and compiled by
// clang, found like the upstream NVVM target finds ptxas: in LLVM's tool
// directory, else on PATH.
//
//===----------------------------------------------------------------------===//

#include "hot/Conversion/NVVMToSimulator.h"
#include "hot/Dialect/Hot/HotAttrs.h"
#include "hot/Dialect/Hot/HotDialect.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

namespace {

/// clang from LLVM's tool directory (the one this project was built with),
/// else the first clang on PATH.
std::optional<std::string> findClang() {
  if (auto path = llvm::sys::findProgramByName("clang", {HOT_LLVM_TOOLS_DIR}))
    return *path;
  if (auto path = llvm::sys::findProgramByName("clang"))
    return *path;
  return std::nullopt;
}

/// A temporary file removed when this goes out of scope.
struct TempFile {
  explicit TempFile(StringRef suffix) {
    ok = !llvm::sys::fs::createTemporaryFile("hot-simulator", suffix, path);
    remover.setFile(path);
  }
  bool ok;
  SmallString<128> path;
  llvm::FileRemover remover;
};

struct SimulatorTargetModel
    : public gpu::TargetAttrInterface::ExternalModel<SimulatorTargetModel,
                                                     hot::SimulatorTargetAttr> {
  std::optional<SmallVector<char, 0>>
  serializeToObject(Attribute attribute, Operation *module,
                    const gpu::TargetOptions &options) const;

  /// The object is labelled with upstream attributes only, so that the
  /// lowered module stays readable by mlir-translate: the NVVM target of the
  /// kernels' chip, in the binary format (loaded with mgpuModuleLoad), with
  /// the property `hot.simulator` (the host triple it was compiled for).
  Attribute createObject(Attribute attribute, Operation *module,
                         const SmallVector<char, 0> &object,
                         const gpu::TargetOptions &options) const {
    MLIRContext *ctx = module->getContext();
    auto target = cast<hot::SimulatorTargetAttr>(attribute);
    Builder b(ctx);
    auto properties = b.getDictionaryAttr(b.getNamedAttr(
        "hot.simulator", b.getStringAttr(llvm::sys::getDefaultTargetTriple())));
    return gpu::ObjectAttr::get(
        ctx,
        NVVM::NVVMTargetAttr::get(ctx, target.getO(), "nvptx64-nvidia-cuda",
                                  target.getChip()),
        gpu::CompilationTarget::Binary,
        StringAttr::get(ctx, StringRef(object.data(), object.size())),
        properties, /*kernels=*/nullptr);
  }
};

std::optional<SmallVector<char, 0>> SimulatorTargetModel::serializeToObject(
    Attribute attribute, Operation *module,
    const gpu::TargetOptions & /*options*/) const {
  auto gpuModule = dyn_cast<gpu::GPUModuleOp>(module);
  if (!gpuModule) {
    module->emitError("#hot.simulator compiles gpu.module ops only");
    return std::nullopt;
  }
  auto target = cast<hot::SimulatorTargetAttr>(attribute);

  // The kernels, as host code, in a module of their own.
  OwningOpRef<ModuleOp> host = ModuleOp::create(module->getLoc());
  IRMapping mapping;
  for (Operation &op : gpuModule.getBody()->getOperations())
    host->getBody()->push_back(op.clone(mapping));
  if (failed(hot::convertNVVMToSimulator(*host)))
    return std::nullopt;

  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*host, llvmContext, gpuModule.getName());
  if (!llvmModule) {
    module->emitError("the simulator's host code failed to translate to "
                      "LLVM IR");
    return std::nullopt;
  }
  llvmModule->setTargetTriple(
      llvm::Triple(llvm::sys::getDefaultTargetTriple()));

  std::optional<std::string> clang = findClang();
  if (!clang) {
    module->emitError("#hot.simulator needs clang (in " HOT_LLVM_TOOLS_DIR
                      " or on PATH)");
    return std::nullopt;
  }
  TempFile input("ll"), output("so"), log("log");
  if (!input.ok || !output.ok || !log.ok) {
    module->emitError("cannot create the simulator's temporary files");
    return std::nullopt;
  }
  {
    std::error_code error;
    llvm::raw_fd_ostream os(input.path, error);
    if (error) {
      module->emitError("cannot write ")
          << input.path << ": " << error.message();
      return std::nullopt;
    }
    llvmModule->print(os, nullptr);
  }
  std::string optLevel = "-O" + std::to_string(target.getO());
  SmallVector<StringRef> args = {*clang,     optLevel, "-shared",
                                 "-fPIC",    "-x",     "ir",
                                 input.path, "-o",     output.path};
  std::optional<StringRef> redirects[] = {std::nullopt, log.path.str(),
                                          log.path.str()};
  std::string message;
  if (llvm::sys::ExecuteAndWait(*clang, args, /*Env=*/std::nullopt, redirects,
                                /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                &message) != 0) {
    auto diag = module->emitError("clang failed on the simulator's host code");
    if (!message.empty())
      diag << ": " << message;
    if (auto text = llvm::MemoryBuffer::getFile(log.path))
      diag << "\n" << (*text)->getBuffer();
    return std::nullopt;
  }
  auto object = llvm::MemoryBuffer::getFile(output.path, /*IsText=*/false);
  if (!object) {
    module->emitError("cannot read ") << output.path;
    return std::nullopt;
  }
  StringRef bytes = (*object)->getBuffer();
  return SmallVector<char, 0>(bytes.begin(), bytes.end());
}

} // namespace

void mlir::hot::registerSimulatorTargetInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, hot::HotDialect *) {
    hot::SimulatorTargetAttr::attachInterface<SimulatorTargetModel>(*ctx);
  });
}
