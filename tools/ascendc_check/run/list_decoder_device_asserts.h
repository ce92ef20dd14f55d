/**
 * @file list_decoder_device_asserts.h
 * @brief tools/ascendc_check/run.py --run: pre-included (-include) into every kernel it runs, so the real ListTensorDesc
 *        decoder runs on the tensor lists CANN's launcher writes, as the device runs it.
 *
 * The decoder (asc-devkit impl/basic_api/dav_c220/kernel_operator_list_tensor_impl.h) checks itself with
 * ASSERT, which is assert() in CPU-debug mode and nothing on the device. Three of those assertions rest on the
 * decoder's tensor count, which it reads from the first header's high half: CANN's launcher writes 1 there
 * (opbase RtsArg::AppendDevicePtrArg), so in CPU-debug they abort every launcher list of two or more tensors
 * (ListTensorDecode's layout check, and `index < count_` in GetDataPtr and GetDesc), while the device, which
 * never evaluates them, decodes pointers and shapes right (twin/ascendc/twin_list_tensor.h has the layout).
 *
 * So the decoder's text alone is compiled with an ASSERT that sends a failed assertion to
 * ascendc_check::ListDecoderAssert (run_support.cpp): one whose expression involves count_ is counted and
 * reported by the driver, any other (a null data pointer, a shape index >= rank, a zero rank in GetDesc's
 * conjunction is the one blind spot) aborts exactly as assert() does. Everything the decoder's headers include
 * is included first, so no other library header sees the changed macro. The decoder's reads themselves are
 * plain loads: a wrong layout shows as wrong element counts or pointers, which the drivers' GM checks catch.
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_LIST_DECODER_DEVICE_ASSERTS_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_LIST_DECODER_DEVICE_ASSERTS_H

#include "kernel_operator.h"  // kernel_macros.h (ASSERT), kernel_tensor.h, kernel_check.h, kernel_basic_intf.h

namespace ascendc_check {
void ListDecoderAssert(const char* expr, const char* file, unsigned line, const char* function);
}  // namespace ascendc_check

#pragma push_macro("ASSERT")
#undef ASSERT
#define ASSERT(x) \
    ((x) ? static_cast<void>(0) : ::ascendc_check::ListDecoderAssert(#x, __FILE__, __LINE__, __PRETTY_FUNCTION__))
#include "kernel_operator_list_tensor_intf.h"
#pragma pop_macro("ASSERT")

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_LIST_DECODER_DEVICE_ASSERTS_H
