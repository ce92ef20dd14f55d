# ctest -P script: each of the 8-bit operator's vector loop objects (OBJECTS, comma-separated: the
# aea_native objects whose name ends in one of SUFFIXES) carries software prefetches (INSTRUCTION:
# prefetcht0 on x86-64, prfm on aarch64).
# GCC deletes a call of an outlined helper that only prefetches (it counts a prefetch as free of
# side effects), which once left the loops with none and the 16.8M step 17 % slower; the loops'
# results do not show it, so this looks at the code.
cmake_minimum_required(VERSION 3.20)
include(${CMAKE_CURRENT_LIST_DIR}/count_instructions.cmake)
if(NOT INSTRUCTION)
  set(INSTRUCTION prefetcht0)
endif()
string(REPLACE "," ";" OBJECTS "${OBJECTS}")
string(REPLACE "," ";" SUFFIXES "${SUFFIXES}")
foreach(suffix ${SUFFIXES})
  set(found "")
  foreach(object ${OBJECTS})
    if(object MATCHES "${suffix}$")
      set(found ${object})
    endif()
  endforeach()
  if(found STREQUAL "")
    message(FATAL_ERROR "no object of aea_native ends in ${suffix}")
  endif()
  aea_count_instructions(${found} "${INSTRUCTION}" n)
  if(n EQUAL 0)
    message(FATAL_ERROR "${suffix}: no ${INSTRUCTION} in its loops")
  endif()
  message("${suffix}: ${n} ${INSTRUCTION}")
endforeach()
