// tools/ascendc_check/run.py --emulate self-tests: the API programs of api_programs.h compiled against the REAL AscendC
// library (the kernel side of --emulate: rig flags, the emulated intrinsic layer). The twin build compiles the same
// header against twin/ascendc/kernel_operator.h inside api_programs_main.cpp.
#include "kernel_operator.h"

#include "api_programs.h"
