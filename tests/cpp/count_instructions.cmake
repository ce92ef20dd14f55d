# Included by the ctest -P scripts that look at built code (check_prefetches.cmake,
# check_no_fused_multiply_add.cmake): aea_count_instructions(OBJECT REGEX OUT) sets OUT to how many
# times REGEX matches OBJECT's disassembly (${OBJDUMP} -d).
function(aea_count_instructions object regex out)
  execute_process(COMMAND ${OBJDUMP} -d --no-show-raw-insn ${object}
                  OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${OBJDUMP} failed on ${object}")
  endif()
  string(REGEX MATCHALL "${regex}" hits "${text}")
  list(LENGTH hits n)
  set(${out} ${n} PARENT_SCOPE)
endfunction()
