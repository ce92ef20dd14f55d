/**
 * @file ascendc_api_values.h
 * @brief Enumerator values of the AscendC API that kernels may store or compare (TPosition::MAX as a count,
 *        RoundMode::UNKNOWN as "unset"), asserted at compile time. Included by tests/cpp/twin_rules_test.cpp
 *        (the CPU twin) and by tools/ascendc_check/run.py's self-test ok_api_values.cpp (the real asc-devkit
 *        headers, dav-c220), so the twin keeps the device's numbers.
 */
#ifndef ASCEND_EMA_ADAM_TESTS_ASCENDC_API_VALUES_H
#define ASCEND_EMA_ADAM_TESTS_ASCENDC_API_VALUES_H

static_assert(static_cast<int>(AscendC::TPosition::VECIN) == 9 && static_cast<int>(AscendC::TPosition::VECOUT) == 10 &&
              static_cast<int>(AscendC::TPosition::VECCALC) == 11 &&
              AscendC::TPosition::LCM == AscendC::TPosition::VECCALC &&
              static_cast<int>(AscendC::TPosition::C2PIPE2GM) == 14 && static_cast<int>(AscendC::TPosition::MAX) == 16,
              "TPosition values");
static_assert(static_cast<int>(AscendC::RoundMode::CAST_NONE) == 0 && static_cast<int>(AscendC::RoundMode::CAST_RINT) == 1 &&
              static_cast<int>(AscendC::RoundMode::CAST_ODD) == 6 && static_cast<int>(AscendC::RoundMode::UNKNOWN) == 0xFF,
              "RoundMode values");
static_assert(static_cast<int>(AscendC::HardEvent::MTE2_V) == 4 && static_cast<int>(AscendC::HardEvent::V_S) == 22 &&
              static_cast<int>(AscendC::HardEvent::FIX_FIX) == 34 && static_cast<int>(AscendC::HardEvent::MAX) == 35,
              "HardEvent values");
static_assert(static_cast<int>(AscendC::TBufState::DEQUE) == 3, "TBufState values");
static_assert(KERNEL_TYPE_AIV_ONLY == 0 && KERNEL_TYPE_MIX_AIC_1_2 == 5 && KERNEL_TYPE_MAX == 10,
              "KernelMetaType values");

#endif  // ASCEND_EMA_ADAM_TESTS_ASCENDC_API_VALUES_H
