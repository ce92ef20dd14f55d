# aea_add_operator(<op>): the one line that adds an operator to the build. Every layer keeps the
# operator's files in a folder named after it, beside the layer's shared part (docs/ARCHITECTURE.md,
# "Adding an operator"); this function finds them by that convention and adds them to the layer's
# targets, which the layer folders define with their shared sources only:
#   op_kernel/<op>/*.cpp              its AscendC kernel entries   -> aea_kernel_twin (on the twin)
#   op_host/<op>/*.cpp                its checks and tiling        -> aea_tiling (op_host/<op>/cann/
#                                                                     is CANN's build's, not ours)
#   runtime/<op>/*_twin_run.cpp       its kernel on the twin       -> aea_runtime
#   runtime/<op>/aclnn_*.cpp          its aclnn API                -> aea_acl_objects
#   runtime/<op>/native/*.cpp         its native kernel's driver (over the shared EMA-Adam entries
#                                     loops of runtime/native/; a loop file of its own, *_<isa>.cpp,
#                                     would be compiled for AEA_NATIVE_ISAS)  -> aea_native
#   csrc/ops/<op>/*.cpp               its torch op (schema, CPU kernel; *_npu.cpp with torch_npu) -> _C
#   csrc/ops/<op>/*_kernels_bindings.cpp  its numpy-level bindings (no torch) -> _kernels
#   op_host/<op>/<op>_signature.json  its signature, declared once (docs/ARCHITECTURE.md, "One
#                                     signature per operator"): cmake/gen_op_signature.py turns it
#                                     into <build>/generated/<op>/<op>_signature.h when CMake
#                                     configures, for its runtime, torch-op and binding sources
# Headers are found by name, and privately: each of the operator's sources gets its own operator's
# folders (aea_operator_includes: its layer's and the layers below) as source include directories;
# the shared targets carry only the layers' common folders, so shared code sees no operator and an
# operator no other operator (tests/python/project/test_operator_independence.py checks the includes
# themselves). aea_operator_<op>, an INTERFACE target with all of the operator's folders, is for
# the operator's C++ tests.
include(${CMAKE_CURRENT_LIST_DIR}/aea_options.cmake)
if(NOT Python_EXECUTABLE)
  find_package(Python REQUIRED COMPONENTS Interpreter)  # runs cmake/gen_op_signature.py
endif()
set(AEA_GENERATED_DIR ${CMAKE_BINARY_DIR}/generated)

# The folders of operator `op` that a source of `layer` may include: its own layer's and those it
# builds on (kernel < host < runtime, torch_op; the _kernels bindings are runtime).
function(aea_operator_includes op layer out)
  set(root ${AEA_SOURCE_DIR})
  set(kernel ${root}/op_kernel/${op})
  set(host ${root}/op_host/${op} ${kernel})
  if(layer STREQUAL "kernel")
    set(dirs ${kernel})
  elseif(layer STREQUAL "host")
    set(dirs ${host})
  elseif(layer STREQUAL "runtime")
    set(dirs ${root}/runtime/${op} ${root}/runtime/${op}/native ${AEA_GENERATED_DIR}/${op} ${host})
  elseif(layer STREQUAL "torch_op")
    set(dirs ${root}/csrc/ops/${op} ${AEA_GENERATED_DIR}/${op} ${host})
  else()
    message(FATAL_ERROR "aea_operator_includes: unknown layer '${layer}'")
  endif()
  set(${out} ${dirs} PARENT_SCOPE)
endfunction()

# <build>/generated/<op>/<op>_signature.h from op_host/<op>/<op>_signature.json, written when
# CMake configures and only when its text changes; a change to the spec or the generator makes
# the build configure again. An operator without a spec gets none (test_op_signature.py wants one).
function(aea_generate_signature op)
  set(spec ${AEA_SOURCE_DIR}/op_host/${op}/${op}_signature.json)
  if(NOT EXISTS ${spec})
    return()
  endif()
  set(generator ${AEA_SOURCE_DIR}/cmake/gen_op_signature.py)
  execute_process(COMMAND ${Python_EXECUTABLE} ${generator} ${spec}
                          ${AEA_GENERATED_DIR}/${op}/${op}_signature.h
                  RESULT_VARIABLE result ERROR_VARIABLE error)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "aea_add_operator(${op}): ${error}")
  endif()
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${spec} ${generator})
endfunction()

# Adds `sources` of operator `op` to `target`, each with the operator's folders of `layer`.
function(aea_operator_sources target op layer)
  aea_operator_includes(${op} ${layer} dirs)
  target_sources(${target} PRIVATE ${ARGN})
  set_property(SOURCE ${ARGN} TARGET_DIRECTORY ${target} APPEND PROPERTY INCLUDE_DIRECTORIES ${dirs})
endfunction()

function(aea_add_operator op)
  set(root ${AEA_SOURCE_DIR})
  foreach(dir op_kernel/${op} op_host/${op} runtime/${op} runtime/${op}/native)
    if(NOT IS_DIRECTORY ${root}/${dir})
      message(FATAL_ERROR "aea_add_operator(${op}): ${dir}/ is missing (see docs/ARCHITECTURE.md)")
    endif()
  endforeach()

  aea_generate_signature(${op})

  # Every folder of the operator, for its tests (tests/cpp).
  add_library(aea_operator_${op} INTERFACE)
  aea_operator_includes(${op} runtime runtime_dirs)
  aea_operator_includes(${op} torch_op torch_op_dirs)
  target_include_directories(aea_operator_${op} INTERFACE ${runtime_dirs} ${torch_op_dirs})

  file(GLOB kernel_sources CONFIGURE_DEPENDS ${root}/op_kernel/${op}/*.cpp)
  aea_operator_sources(aea_kernel_twin ${op} kernel ${kernel_sources})

  file(GLOB host_sources CONFIGURE_DEPENDS ${root}/op_host/${op}/*.cpp)
  aea_operator_sources(aea_tiling ${op} host ${host_sources})

  file(GLOB twin_run_sources CONFIGURE_DEPENDS ${root}/runtime/${op}/*_twin_run.cpp)
  aea_operator_sources(aea_runtime ${op} runtime ${twin_run_sources})

  file(GLOB aclnn_sources CONFIGURE_DEPENDS ${root}/runtime/${op}/aclnn_*.cpp)
  aea_operator_sources(aea_acl_objects ${op} runtime ${aclnn_sources})

  file(GLOB native_sources CONFIGURE_DEPENDS ${root}/runtime/${op}/native/*.cpp)
  aea_operator_sources(aea_native ${op} runtime ${native_sources})
  foreach(source ${native_sources})
    aea_native_isa_properties(aea_native ${source})
  endforeach()

  if(AEA_BUILD_PYTHON)
    file(GLOB op_sources CONFIGURE_DEPENDS ${root}/csrc/ops/${op}/*.cpp)
    set(torch_op_sources)
    foreach(source ${op_sources})
      if(source MATCHES "_kernels_bindings\\.cpp$")
        continue()
      elseif(NOT source MATCHES "_npu\\.cpp$" OR AEA_WITH_NPU)
        list(APPEND torch_op_sources ${source})
      endif()
    endforeach()
    aea_operator_sources(_C ${op} torch_op ${torch_op_sources})
    file(GLOB binding_sources CONFIGURE_DEPENDS ${root}/csrc/ops/${op}/${op}_kernels_bindings.cpp)
    aea_operator_sources(_kernels ${op} runtime ${binding_sources})
  endif()
endfunction()

# A loop file of an instruction set in AEA_NATIVE_ISAS gets that set's flags; one of another set
# compiles to its "no loop in this build" stub (AEA_NATIVE_OMITTED), which costs nothing.
function(aea_native_isa_properties target source)
  aea_native_isa_of(${source} isa)
  if(isa STREQUAL "none")
    return()
  elseif(isa IN_LIST AEA_NATIVE_ISA_LIST)
    set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES
                                COMPILE_OPTIONS "${AEA_NATIVE_FLAGS_${isa}}")
  else()
    set_source_files_properties(${source} TARGET_DIRECTORY ${target} PROPERTIES
                                COMPILE_DEFINITIONS AEA_NATIVE_OMITTED)
  endif()
endfunction()

# The instruction set a native source is compiled for ("avx512", "avx2", "neon", "generic"), or "none" for
# a source every build compiles.
function(aea_native_isa_of source out)
  set(isa none)
  if(source MATCHES "_(avx512|avx2|neon|generic)\\.cpp$")
    set(isa ${CMAKE_MATCH_1})
  endif()
  set(${out} ${isa} PARENT_SCOPE)
endfunction()
