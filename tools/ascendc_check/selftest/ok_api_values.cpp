// ascendc-check: expect-ok
// Rig self-test: the enumerator values tests/cpp/twin_rules_test.cpp asserts for the CPU twin hold for the real
// headers too (one header of static_asserts, compiled against both).
#include "kernel_operator.h"

#include "../../../tests/cpp/ascendc_api_values.h"
