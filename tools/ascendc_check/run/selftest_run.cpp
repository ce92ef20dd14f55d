// tools/ascendc_check/run.py --run driver for the rig's run self-tests (selftest/run_*.cpp): one block of
// `ascendc_check_selftest()`, which must end as the test's `// ascendc-check: run-...` line says.
#include "run_support.h"

extern "C" void ascendc_check_selftest();

int main() { return ascendc_check::RunBlocks("self-test", 1, 0, [] { ascendc_check_selftest(); }) == 0 ? 0 : 1; }
