# -*- Python -*-
# lit configuration of the hot project.

import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "HOT"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.hot_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Fixtures"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%mlir_lib_dir", config.mlir_lib_dir))
# The hot dialect and passes as a plugin of upstream mlir-opt.
config.substitutions.append(("%hot_plugin", config.hot_plugin))

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()

tool_dirs = [config.hot_tools_dir, config.llvm_tools_dir]
tools = [
    "hot-opt",
    "not",
    ToolSubst("mlir-runner", command="mlir-runner-22", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, tool_dirs)

# Upstream tools, never the project's: mlir-opt is the one that loads
# HotPlugin.so.
llvm_config.add_tool_substitutions(
    [
        ToolSubst("mlir-opt", unresolved="fatal"),
        ToolSubst("llvm-nm", unresolved="fatal"),
        ToolSubst("llvm-readelf", unresolved="fatal"),
    ],
    [config.llvm_tools_dir],
)
