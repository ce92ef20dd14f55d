/**
 * @file ema_adam_entries_neon.cpp
 * @brief The EMA-Adam entries loops with aarch64 NEON: 4 fp32 lanes, tails one element at a time.
 *        Compiled only for aarch64 (every ARMv8-A core has NEON).
 */
#include "native_simd_neon.h"

#include "ema_adam_entries_impl.h"

namespace ascend_ema_adam::native {

#ifdef AEA_NATIVE_HAVE_NEON
EntriesLoop EmaAdamEntriesNeon(const EntryLoopShape& shape)
{
    return PickEntriesLoop<Neon>(shape);
}
#else
EntriesLoop EmaAdamEntriesNeon(const EntryLoopShape&) { return nullptr; }
#endif

}  // namespace ascend_ema_adam::native
