# The build settings every layer folder reads (the top-level CMakeLists.txt and
# tools/cann_host/CMakeLists.txt, which builds the layers beside CANN's code, include this file).
set(AEA_SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." CACHE INTERNAL "the ascend-ema-adam tree")
get_filename_component(AEA_SOURCE_DIR "${AEA_SOURCE_DIR}" ABSOLUTE)

# Every kernel and golden-matching translation unit: IEEE fp32, one rounding per operation.
# No FMA contraction and no fast-math, or bit-exactness with the golden model is lost.
set(AEA_EXACT_FP_FLAGS -ffp-contract=off -fno-fast-math)
# The kernels', the native loops' and the twin's optimisation level (-O0 in the sanitizer tree).
set(AEA_OPTIMIZE -O3 CACHE STRING "Optimisation level of the kernels, the native loops and the twin")

# The instruction sets the native kernels' loops are compiled for (their files are
# runtime/<op>/native/*_<isa>.cpp): all of the target architecture's by default (x86-64: avx512,
# avx2, generic; aarch64: neon, generic), the best one at run time. "host" compiles only the best
# one this machine runs: for a build that runs only here, like the sanitizer tree, where the other
# loop files would cost minutes each and never run. Any other set compiles to a stub that says so.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set(_aea_arch_isas avx512 avx2 generic)
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64|ARM64")
  set(_aea_arch_isas neon generic)
else()
  set(_aea_arch_isas generic)
endif()
set(AEA_NATIVE_ISAS "${_aea_arch_isas}" CACHE STRING
    "Native loop instruction sets to compile (avx512, avx2, neon, generic; or host)")
set(AEA_NATIVE_FLAGS_avx2 -mavx2 -mf16c -Wno-ignored-attributes)
set(AEA_NATIVE_FLAGS_avx512 -mavx512f -mavx512bw -mavx512vl -mf16c -Wno-ignored-attributes)
set(AEA_NATIVE_FLAGS_neon "")  # Advanced SIMD is baseline ARMv8-A
set(AEA_NATIVE_FLAGS_generic "")
if(NOT AEA_NATIVE_ISAS STREQUAL "host")
  set(AEA_NATIVE_ISA_LIST)
  foreach(isa ${AEA_NATIVE_ISAS})
    if(isa IN_LIST _aea_arch_isas)
      list(APPEND AEA_NATIVE_ISA_LIST ${isa})
    endif()
  endforeach()
  if(NOT AEA_NATIVE_ISA_LIST)
    set(AEA_NATIVE_ISA_LIST generic)
  endif()
elseif(CMAKE_SYSTEM_PROCESSOR MATCHES "aarch64|arm64|ARM64")
  set(AEA_NATIVE_ISA_LIST neon)
elseif(NOT CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set(AEA_NATIVE_ISA_LIST generic)
else()
  # As native_runtime.cpp's BestIsa() decides at run time (F16C plus AVX-512 F/BW/VL, or AVX2).
  file(READ /proc/cpuinfo _aea_cpuinfo)
  string(REGEX MATCH "flags[^\n]*" _aea_flags "${_aea_cpuinfo}")
  set(AEA_NATIVE_ISA_LIST generic)
  if(_aea_flags MATCHES " f16c" AND _aea_flags MATCHES " avx512f" AND _aea_flags MATCHES " avx512bw"
     AND _aea_flags MATCHES " avx512vl")
    set(AEA_NATIVE_ISA_LIST avx512)
  elseif(_aea_flags MATCHES " f16c" AND _aea_flags MATCHES " avx2")
    set(AEA_NATIVE_ISA_LIST avx2)
  endif()
endif()
message(STATUS "ascend_ema_adam: native loops for ${AEA_NATIVE_ISA_LIST}")
