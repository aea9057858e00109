# The installed CMake package of the hot project: `find_package(HOT CONFIG)`
# from an install prefix gives HOT::HotDialect, HOT::HotToLinalg, ... (every
# library of the project), HOT::HOT (an interface target linking all of
# them), HOT::hot-opt and HOT::HotPlugin.
#
# Included at the end of the top-level CMakeLists.txt, once every directory
# has added its libraries: the libraries are the ones `add_mlir_library` (and
# its dialect/conversion variants) recorded in the global MLIR_EXPORTS
# property, so a new library is packaged without touching this file.

include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

set(HOT_PACKAGE_VERSION 0.1.0)
set(HOT_INSTALL_PACKAGE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/hot)

# The project's libraries, in the order they were added.
get_property(_hot_candidates GLOBAL PROPERTY MLIR_EXPORTS)
set(HOT_LIBRARIES)
set(HOT_STATIC_LIBRARIES)
foreach(_lib IN LISTS _hot_candidates)
  if(NOT TARGET ${_lib})
    continue()
  endif()
  get_target_property(_imported ${_lib} IMPORTED)
  get_target_property(_type ${_lib} TYPE)
  if(_imported OR NOT _type MATCHES "^(STATIC|SHARED)_LIBRARY$")
    continue()
  endif()
  list(APPEND HOT_LIBRARIES ${_lib})
  if(_type STREQUAL "STATIC_LIBRARY")
    list(APPEND HOT_STATIC_LIBRARIES ${_lib})
  endif()
endforeach()
list(REMOVE_DUPLICATES HOT_LIBRARIES)
list(REMOVE_DUPLICATES HOT_STATIC_LIBRARIES)

# HOT::HOT: everything of the project in one link item (the static libraries;
# each of them links libMLIR.so). The plugin links it too.
add_library(HOT INTERFACE)
add_library(HOT::HOT ALIAS HOT)
target_link_libraries(HOT INTERFACE ${HOT_STATIC_LIBRARIES})
target_compile_features(HOT INTERFACE cxx_std_17)

# Headers: the sources' and the generated ones (.inc from tablegen); the .td
# files too, so that downstream ODS can include the dialect's definitions.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/hot
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT hot-headers
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/hot
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT hot-headers
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)

install(TARGETS ${HOT_LIBRARIES} HOT
  EXPORT HOTTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The driver and the mlir-opt plugin, as HOT::hot-opt and HOT::HotPlugin.
# LLVM's install rpath is $ORIGIN/../lib only: add the directory of the
# libMLIR.so and libLLVM.so they were linked against.
set_property(TARGET hot-opt HotPlugin APPEND PROPERTY
  INSTALL_RPATH ${LLVM_LIBRARY_DIR})
install(TARGETS hot-opt HotPlugin
  EXPORT HOTTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT HOTTargets
  NAMESPACE HOT::
  DESTINATION ${HOT_INSTALL_PACKAGE_DIR}
  COMPONENT hot-cmake)

# HOTConfig.cmake finds the same MLIR (and through it LLVM) the project was
# built against: the exported libraries link its libMLIR.so.
set(HOT_MLIR_VERSION ${LLVM_VERSION_MAJOR}.${LLVM_VERSION_MINOR})
list(TRANSFORM HOT_LIBRARIES PREPEND "HOT::" OUTPUT_VARIABLE HOT_EXPORTED_LIBRARIES)
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/HOTConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/HOTConfig.cmake
  INSTALL_DESTINATION ${HOT_INSTALL_PACKAGE_DIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/HOTConfigVersion.cmake
  VERSION ${HOT_PACKAGE_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/HOTConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/HOTConfigVersion.cmake
  DESTINATION ${HOT_INSTALL_PACKAGE_DIR}
  COMPONENT hot-cmake)
