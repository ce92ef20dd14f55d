/**
 * @file ema_adam_entries_avx512.cpp
 * @brief The EMA-Adam entries loops with AVX-512 (F, BW, VL) and F16C: 16 fp32 lanes,
 *        masked tails. Called only when the CPU reports those extensions.
 */
#include "native_simd_avx512.h"

#include "ema_adam_entries_impl.h"

namespace ascend_ema_adam::native {

#ifdef AEA_NATIVE_HAVE_AVX512
EntriesLoop EmaAdamEntriesAvx512(const EntryLoopShape& shape)
{
    return PickEntriesLoop<Avx512>(shape);
}
#else
EntriesLoop EmaAdamEntriesAvx512(const EntryLoopShape&) { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
