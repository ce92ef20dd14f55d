// tools/ascendc_check/run.py --run and --emulate support linked into every program: the recorder behind the stand-in's
// GM copy intrinsics (gm_copy_trace.h), guarded regions, and the list decoder's assertions as the device compiles
// them (list_decoder_device_asserts.h). The mask-model hooks asc-tools' checks read are per mode:
// mask_model_none.cpp (--run) and ../emulate/emulate_support.cpp (--emulate).
#include <sys/mman.h>
#include <unistd.h>

#include <cassert>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "run_support.h"

namespace {

constexpr uint32_t kMaxAsserts = 8;

// Shared (MAP_SHARED) with every forked block; blocks run one after another.
struct TraceMemory {
    uint64_t capacity;
    uint64_t count;
    const char* assertExpr[kMaxAsserts];  // string literals: the same address in every forked block
    uint64_t assertCount[kMaxAsserts];
    ascendc_check::GmCopy records[1];
};

TraceMemory* g_trace = nullptr;

}  // namespace

extern "C" void ascendc_check_gm_copy(const char* intrinsic, int toGm, uint32_t elemBytes, const void* gm,
                                      uint64_t bursts, uint64_t burstBytes, uint64_t gapBytes)
{
    if (g_trace == nullptr) {
        return;
    }
    if (g_trace->count >= g_trace->capacity) {
        std::fprintf(stderr, "ascendc-check: block %lld: more than %llu GM copies in one launch (a runaway walk?)\n",
                     static_cast<long long>(block_idx), static_cast<unsigned long long>(g_trace->capacity));
        std::abort();
    }
    g_trace->records[g_trace->count++] = {intrinsic, static_cast<uint32_t>(block_idx), toGm != 0, elemBytes,
                                          reinterpret_cast<uint64_t>(gm), bursts, burstBytes, gapBytes};
}

namespace ascendc_check {

namespace {
std::vector<GuardedRegion> g_regions;
}  // namespace

void SetGuardedRegions(std::vector<GuardedRegion> regions) { g_regions = std::move(regions); }

void OnMemoryFault(int sig, siginfo_t* info, void*)
{
    const uint64_t addr = reinterpret_cast<uint64_t>(info->si_addr);
    for (const GuardedRegion& r : g_regions) {
        const uint64_t base = reinterpret_cast<uint64_t>(r.base);
        if (addr >= base && addr - base < r.bytes) {
            char line[256];
            const int n = std::snprintf(line, sizeof line, "run: block %lld touched %s at %#llx\n",
                                        static_cast<long long>(block_idx), r.what,
                                        static_cast<unsigned long long>(addr));
            (void)!write(STDOUT_FILENO, line, static_cast<size_t>(n));
        }
    }
    OnFatalSignal(sig);
}

void ListDecoderAssert(const char* expr, const char* file, unsigned line, const char* function)
{
    // The count assertions: CANN's launcher writes 1 in every header's high half, so the decoder's count is 1 for
    // every list and these fail for any list of two or more tensors. The device compiles them out.
    if (std::strstr(expr, "count_") == nullptr) {
        __assert_fail(expr, file, line, function);
    }
    if (g_trace == nullptr) {
        return;
    }
    for (uint32_t i = 0; i < kMaxAsserts; ++i) {
        if (g_trace->assertExpr[i] == nullptr || std::strcmp(g_trace->assertExpr[i], expr) == 0) {
            g_trace->assertExpr[i] = expr;
            ++g_trace->assertCount[i];
            return;
        }
    }
}

void GmCopyTrace::Open(uint64_t capacity)
{
    const size_t bytes = sizeof(TraceMemory) + capacity * sizeof(GmCopy);
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        std::perror("ascendc-check: mmap of the GM copy trace");
        std::exit(2);
    }
    g_trace = static_cast<TraceMemory*>(p);  // zero-filled
    g_trace->capacity = capacity;
}

std::vector<GmCopy> GmCopyTrace::Take()
{
    std::vector<GmCopy> out;
    if (g_trace != nullptr) {
        out.assign(g_trace->records, g_trace->records + g_trace->count);
        g_trace->count = 0;
    }
    return out;
}

std::vector<ToleratedAssert> GmCopyTrace::ToleratedAsserts()
{
    std::vector<ToleratedAssert> out;
    for (uint32_t i = 0; g_trace != nullptr && i < kMaxAsserts && g_trace->assertExpr[i] != nullptr; ++i) {
        out.push_back({g_trace->assertExpr[i], g_trace->assertCount[i]});
    }
    return out;
}

}  // namespace ascendc_check
