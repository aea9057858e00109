# ctest driver of test/Package/consumer: installs the built project into a
# fresh prefix, configures, builds and runs the consumer project against it,
# and FileChecks its output.
#
#   cmake -DHOT_BINARY_DIR=... -DWORK_DIR=... -DCONSUMER_SOURCE_DIR=...
#         -DGENERATOR=... -DMAKE_PROGRAM=... -DCXX_COMPILER=...
#         -DLINKER_FLAGS=... -DMLIR_DIR=... -DFILECHECK=... -P consumer.cmake

function(run what)
  execute_process(COMMAND ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${WORK_DIR}/prefix)
set(build ${WORK_DIR}/build)
file(REMOVE_RECURSE ${WORK_DIR})

run("install" ${CMAKE_COMMAND} --install ${HOT_BINARY_DIR} --prefix ${prefix})
# The installed driver finds libMLIR.so.
run("installed hot-opt" ${prefix}/bin/hot-opt --version)

run("configure" ${CMAKE_COMMAND} -G ${GENERATOR} -S ${CONSUMER_SOURCE_DIR} -B ${build}
  -DCMAKE_BUILD_TYPE=Release
  -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}
  -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
  -DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON
  -DMLIR_DIR=${MLIR_DIR}
  -DHOT_DIR=${prefix}/lib/cmake/hot)

# The consumer sees hot's headers in the prefix only, not in its build tree.
file(READ ${build}/compile_commands.json commands)
string(FIND "${commands}" "${HOT_BINARY_DIR}/include" in_build_tree)
if(NOT in_build_tree EQUAL -1)
  message(FATAL_ERROR "the consumer compiles against hot's build tree:\n${commands}")
endif()

run("build" ${CMAKE_COMMAND} --build ${build})
run("hot-consumer" ${build}/hot-consumer)
file(WRITE ${WORK_DIR}/output.mlir "${out}")
run("FileCheck" ${FILECHECK} ${CONSUMER_SOURCE_DIR}/main.cpp
  --input-file=${WORK_DIR}/output.mlir --implicit-check-not=hot.)
message(STATUS "hot-consumer output:\n${out}")
