# ctest -P script: no object of OBJECTS (comma-separated: every kernel translation unit of an
# aarch64 build) holds a fused multiply-add (fmla, fmls, fmadd, fmsub, fnmadd, fnmsub, fnmla, fnmls).
# GCC contracts a*b+c into one by default in GNU C++ on aarch64, NEON intrinsics included (vmulq_f32
# and vaddq_f32 are plain vector * and +); one rounding instead of two breaks bit-exactness with the
# golden. AEA_EXACT_FP_FLAGS (-ffp-contract=off) forbids it; this holds the built code to it.
cmake_minimum_required(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/count_instructions.cmake)
string(REPLACE "," ";" OBJECTS "${OBJECTS}")
set(total 0)
set(fused 0)
foreach(object ${OBJECTS})
  aea_count_instructions(${object} "[ \t]f(n?m(add|sub)|n?ml[as])[ \t]" n)
  if(n GREATER 0)
    get_filename_component(name ${object} NAME)
    message(SEND_ERROR "${name}: ${n} fused multiply-adds")
    math(EXPR fused "${fused} + 1")
  endif()
  math(EXPR total "${total} + 1")
endforeach()
if(fused EQUAL 0)
  message("${total} objects, no fused multiply-add")
endif()
