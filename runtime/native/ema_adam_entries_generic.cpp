/**
 * @file ema_adam_entries_generic.cpp
 * @brief The EMA-Adam entries loops in portable C++, one element at a time: the fallback
 *        on CPUs (or architectures) without AVX2.
 */
#include "ema_adam_entries_impl.h"

namespace ascend_ema_adam::native {

#ifndef AEA_NATIVE_OMITTED  // see cmake/aea_add_operator.cmake
EntriesLoop EmaAdamEntriesGeneric(const EntryLoopShape& shape)
{
    return PickEntriesLoop<Scalar>(shape);
}
#else
EntriesLoop EmaAdamEntriesGeneric(const EntryLoopShape&) { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
