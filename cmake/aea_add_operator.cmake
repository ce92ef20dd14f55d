# aea_add_operator(<op>): the one line that adds an operator to the build. Every layer keeps the
# operator's files in a folder named after it, beside the layer's shared part (docs/ARCHITECTURE.md,
# "Adding an operator"); this function finds them by that convention and adds them to the layer's
# targets, which the layer folders define with their shared sources only:
#   op_kernel/<op>/*.cpp              its AscendC kernel entries   -> aea_kernel_twin (on the twin)
#   op_host/<op>/*.cpp                its checks and tiling        -> aea_tiling (op_host/<op>/cann/
#                                                                     is CANN's build's, not ours)
#   runtime/<op>/*_twin_run.cpp       its kernel on the twin       -> aea_runtime
#   runtime/<op>/aclnn_*.cpp          its aclnn API                -> aea_acl_objects
#   runtime/<op>/native/*.cpp         its native kernel: a driver, and one loop file per instruction
#                                     set (*_<isa>.cpp), compiled for AEA_NATIVE_ISAS  -> aea_native
#   csrc/ops/<op>/*.cpp               its torch op (schema, CPU kernel; *_npu.cpp with torch_npu) -> _C
#   csrc/twin/<op>_bindings.cpp       its numpy-level bindings      -> _twin
# Headers are found by name: each folder is on its target's include path.
include(${CMAKE_CURRENT_LIST_DIR}/aea_options.cmake)

function(aea_add_operator op)
  set(root ${AEA_SOURCE_DIR})
  foreach(dir op_kernel/${op} op_host/${op} runtime/${op} runtime/${op}/native)
    if(NOT IS_DIRECTORY ${root}/${dir})
      message(FATAL_ERROR "aea_add_operator(${op}): ${dir}/ is missing (see docs/ARCHITECTURE.md)")
    endif()
  endforeach()

  file(GLOB kernel_sources CONFIGURE_DEPENDS ${root}/op_kernel/${op}/*.cpp)
  target_sources(aea_kernel_twin PRIVATE ${kernel_sources})
  target_include_directories(aea_kernel_twin PUBLIC ${root}/op_kernel/${op})

  file(GLOB host_sources CONFIGURE_DEPENDS ${root}/op_host/${op}/*.cpp)
  target_sources(aea_tiling PRIVATE ${host_sources})
  target_include_directories(aea_tiling PUBLIC ${root}/op_host/${op} ${root}/op_kernel/${op})

  file(GLOB twin_run_sources CONFIGURE_DEPENDS ${root}/runtime/${op}/*_twin_run.cpp)
  target_sources(aea_runtime PRIVATE ${twin_run_sources})
  target_include_directories(aea_runtime PUBLIC ${root}/runtime/${op})

  file(GLOB aclnn_sources CONFIGURE_DEPENDS ${root}/runtime/${op}/aclnn_*.cpp)
  target_sources(aea_acl_objects PRIVATE ${aclnn_sources})

  file(GLOB native_sources CONFIGURE_DEPENDS ${root}/runtime/${op}/native/*.cpp)
  foreach(source ${native_sources})
    aea_native_isa_of(${source} isa)
    target_sources(aea_native PRIVATE ${source})
    aea_native_isa_properties(aea_native ${source})
  endforeach()
  target_include_directories(aea_native PUBLIC ${root}/runtime/${op}/native ${root}/runtime/${op})

  if(AEA_BUILD_PYTHON)
    file(GLOB op_sources CONFIGURE_DEPENDS ${root}/csrc/ops/${op}/*.cpp)
    foreach(source ${op_sources})
      if(NOT source MATCHES "_npu\\.cpp$" OR AEA_WITH_NPU)
        target_sources(_C PRIVATE ${source})
      endif()
    endforeach()
    target_include_directories(_C PRIVATE ${root}/csrc/ops/${op})
    file(GLOB binding_sources CONFIGURE_DEPENDS ${root}/csrc/twin/${op}_bindings.cpp)
    target_sources(_twin PRIVATE ${binding_sources})
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

# The instruction set a native source is compiled for ("avx512", "avx2", "generic"), or "none" for
# a source every build compiles.
function(aea_native_isa_of source out)
  set(isa none)
  if(source MATCHES "_(avx512|avx2|generic)\\.cpp$")
    set(isa ${CMAKE_MATCH_1})
  endif()
  set(${out} ${isa} PARENT_SCOPE)
endfunction()
