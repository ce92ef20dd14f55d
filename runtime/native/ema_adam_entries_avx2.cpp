/**
 * @file ema_adam_entries_avx2.cpp
 * @brief The EMA-Adam entries loops with AVX2 and F16C: 8 fp32 lanes, tails one element
 *        at a time. Called only when the CPU reports those extensions.
 */
#include "native_simd_avx2.h"

#include "ema_adam_entries_impl.h"

namespace ascend_ema_adam::native {

#ifdef AEA_NATIVE_HAVE_AVX2
EntriesLoop EmaAdamEntriesAvx2(const EntryLoopShape& shape)
{
    return PickEntriesLoop<Avx2>(shape);
}
#else
EntriesLoop EmaAdamEntriesAvx2(const EntryLoopShape&) { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
