/**
 * @file twin_device.cpp
 * @brief The device end of the stand-in runtime (tools/cann_host): kernel "binaries", function
 *        handles and the launch, running our AscendC kernels on the CPU twin.
 *
 *  aclrtBinaryLoadFromData   the .o opbase read from the opp tree (tools/cann_host/gen_opp.py):
 *                            {"twinKernel": <entry>, "tilingKeys": [...]}, the keys the device
 *                            compiler builds into the binary
 *  aclrtBinaryGetFunctionByEntry  the function of one tiling key; a key the binary lacks is
 *                            ACL_ERROR_RT_KERNEL_LOOKUP, as the runtime answers
 *  aclrtLaunchKernelWithHostArgs  what the runtime does with host args: copies them to device
 *                            memory, writes each place holder's device address (args base +
 *                            dataOffset) into the word at addrOffset, and starts numBlocks blocks
 *                            whose kernel parameters are the buffer's words in order (inputs,
 *                            outputs -- list descriptors included, as opbase laid them out --,
 *                            workspace, tiling). Nothing is re-packed here. GM regions: every live
 *                            device allocation (the args copy included).
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "acl/acl_rt.h"
#include "kernel_operator.h"
#include "twin_launch.h"

extern "C" size_t CannHostDeviceRegions(const void** bases, size_t* sizes, size_t capacity);

// Our kernel entries, found in op_kernel/<op>/*.cpp by tools/cann_host/CMakeLists.txt:
// AEA_TWIN_KERNEL(entry, its number of GM_ADDR parameters), one line each.
template <size_t>
using GmArg = GM_ADDR;
template <class Indices>
struct EntryType;
template <size_t... I>
struct EntryType<std::index_sequence<I...>> {
    using type = void(GmArg<I>...);
};
template <size_t N>
using KernelEntry = typename EntryType<std::make_index_sequence<N>>::type;

#define AEA_TWIN_KERNEL(entry, arity) extern "C" KernelEntry<arity> entry;
#include "twin_kernel_entries.inc"
#undef AEA_TWIN_KERNEL

namespace {

constexpr uint32_t kUbBytes = 196608;  // Ascend910B2: 192 KiB UB per AIV core

struct Binary {
    std::string entry;
    std::vector<uint64_t> keys;
};
struct Function {
    const Binary* binary;
    uint64_t tilingKey;
};

/** The kernel `entry` with its parameters a[0 .. sizeof...(I)) on the twin. */
template <size_t... I>
twin::LaunchResult LaunchEntry(void (*entry)(GmArg<I>...), const twin::LaunchConfig& cfg, GM_ADDR* a,
                               std::index_sequence<I...>)
{
    return twin::Launch(entry, cfg, a[I]...);
}

struct Kernel {
    const char* entry;
    size_t arity;
    twin::LaunchResult (*run)(const twin::LaunchConfig& cfg, GM_ADDR* a);
};

const Kernel kKernels[] = {
#define AEA_TWIN_KERNEL(entry, arity)                                                           \
    {#entry, arity, [](const twin::LaunchConfig& cfg, GM_ADDR* a) {                           \
         return LaunchEntry(&entry, cfg, a, std::make_index_sequence<arity>{});                  \
     }},
#include "twin_kernel_entries.inc"
#undef AEA_TWIN_KERNEL
};

const Kernel* FindKernel(const std::string& entry)
{
    for (const Kernel& k : kKernels) {
        if (entry == k.entry) return &k;
    }
    return nullptr;
}

/** The number of parameters of kernel `entry`; 0 for an entry that is not one of ours. */
size_t Arity(const std::string& entry)
{
    const Kernel* k = FindKernel(entry);
    return k != nullptr ? k->arity : 0;
}

twin::LaunchResult Run(const std::string& entry, const twin::LaunchConfig& cfg, GM_ADDR* a)
{
    return FindKernel(entry)->run(cfg, a);
}

}  // namespace

#define STANDIN extern "C" __attribute__((visibility("default")))

STANDIN aclError aclrtBinaryLoadFromData(const void* data, size_t length, const aclrtBinaryLoadOptions*,
                                         aclrtBinHandle* binHandle)
{
    const std::string text(static_cast<const char*>(data), length);
    const size_t e = text.find("\"twinKernel\": \"");
    const size_t k = text.find("\"tilingKeys\": [");
    if (e == std::string::npos || k == std::string::npos) {
        std::fprintf(stderr, "twin_device: not a twin kernel binary (%zu bytes)\n", length);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    auto* bin = new Binary;
    const size_t start = e + std::strlen("\"twinKernel\": \"");
    bin->entry = text.substr(start, text.find('"', start) - start);
    const char* p = text.c_str() + k + std::strlen("\"tilingKeys\": [");
    while (*p != ']' && *p != '\0') {
        char* end = nullptr;
        bin->keys.push_back(std::strtoull(p, &end, 10));
        p = end;
        while (*p == ',' || *p == ' ') {
            ++p;
        }
    }
    if (Arity(bin->entry) == 0) {
        std::fprintf(stderr, "twin_device: unknown kernel entry %s\n", bin->entry.c_str());
        delete bin;
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    *binHandle = bin;
    return ACL_SUCCESS;
}

STANDIN aclError aclrtBinaryGetFunctionByEntry(aclrtBinHandle binHandle, uint64_t funcEntry,
                                               aclrtFuncHandle* funcHandle)
{
    const auto* bin = static_cast<const Binary*>(binHandle);
    for (uint64_t key : bin->keys) {
        if (key == funcEntry) {
            *funcHandle = new Function{bin, funcEntry};  // handles live as long as the process
            return ACL_SUCCESS;
        }
    }
    std::fprintf(stderr, "twin_device: %s has no kernel for tiling key %lu\n", bin->entry.c_str(),
                 static_cast<unsigned long>(funcEntry));
    return ACL_ERROR_RT_KERNEL_LOOKUP;
}

STANDIN aclError aclrtBinaryGetFunction(const aclrtBinHandle binHandle, const char* kernelName,
                                        aclrtFuncHandle* funcHandle)
{
    const auto* bin = static_cast<const Binary*>(binHandle);
    if (kernelName == nullptr || bin->entry != kernelName) {
        return ACL_ERROR_RT_KERNEL_LOOKUP;
    }
    *funcHandle = new Function{bin, 0};
    return ACL_SUCCESS;
}

STANDIN aclError aclrtLaunchKernelWithHostArgs(aclrtFuncHandle funcHandle, uint32_t numBlocks, aclrtStream,
                                               aclrtLaunchKernelCfg*, void* hostArgs, size_t argsSize,
                                               aclrtPlaceHolderInfo* placeHolderArray, size_t placeHolderNum)
{
    const auto* fn = static_cast<const Function*>(funcHandle);
    const size_t arity = Arity(fn->binary->entry);
    if (hostArgs == nullptr || argsSize < arity * sizeof(uint64_t) || numBlocks == 0) {
        std::fprintf(stderr, "twin_device: %s launch with %zu bytes of args (%zu parameters), %u blocks\n",
                     fn->binary->entry.c_str(), argsSize, arity, numBlocks);
        return ACL_ERROR_RT_PARAM_INVALID;
    }
    // The device copy of the args, patched as the runtime patches it.
    void* dev = nullptr;
    if (aclrtMalloc(&dev, argsSize, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
        return ACL_ERROR_RT_MEMORY_ALLOCATION;
    }
    auto* base = static_cast<uint8_t*>(dev);
    std::memcpy(base, hostArgs, argsSize);
    for (size_t i = 0; i < placeHolderNum; ++i) {
        const aclrtPlaceHolderInfo& ph = placeHolderArray[i];
        if (ph.addrOffset + sizeof(uint64_t) > argsSize || ph.dataOffset > argsSize) {
            std::fprintf(stderr, "twin_device: place holder %zu (addr %u, data %u) outside %zu bytes of args\n", i,
                         ph.addrOffset, ph.dataOffset, argsSize);
            aclrtFree(dev);
            return ACL_ERROR_RT_PARAM_INVALID;
        }
        if (ph.addrOffset == 0 && ph.dataOffset == 0 && std::getenv("CANN_HOST_VERBOSE") != nullptr) {
            // A slot opbase counted but never filled: the runtime writes the args' own address over
            // the kernel's first parameter (see docs/ACLNN.md, D1).
            std::fprintf(stderr, "twin_device: place holder %zu of %zu is {0, 0}: never filled\n", i, placeHolderNum);
        }
        const uint64_t addr = reinterpret_cast<uint64_t>(base + ph.dataOffset);
        std::memcpy(base + ph.addrOffset, &addr, sizeof(addr));
    }
    std::vector<GM_ADDR> params(arity);
    std::memcpy(params.data(), base, arity * sizeof(uint64_t));

    twin::LaunchConfig cfg;
    cfg.blockDim = numBlocks;
    cfg.tilingKey = fn->tilingKey;
    cfg.ubBytes = kUbBytes;
    // The runtime loads CTRL[48] for each task from the device's float-overflow mode.
    aclrtFloatOverflowMode overflow = ACL_RT_OVERFLOW_MODE_INFNAN;
    aclrtGetDeviceSatMode(&overflow);
    cfg.overflowMode = overflow == ACL_RT_OVERFLOW_MODE_SATURATION ? twin::FloatOverflowMode::Saturation
                                                                   : twin::FloatOverflowMode::InfNan;
    const size_t n = CannHostDeviceRegions(nullptr, nullptr, 0);
    std::vector<const void*> bases(n);
    std::vector<size_t> sizes(n);
    CannHostDeviceRegions(bases.data(), sizes.data(), n);
    for (size_t i = 0; i < n; ++i) {
        cfg.gm.push_back({bases[i], sizes[i]});
    }
    aclError status = ACL_SUCCESS;
    try {
        Run(fn->binary->entry, cfg, params.data());
    } catch (const std::exception& e) {
        // What a device reports for a kernel that faults (an AI Core exception on the stream).
        std::fprintf(stderr, "twin_device: %s (tiling key %lu, %u blocks) faulted: %s\n",
                     fn->binary->entry.c_str(), static_cast<unsigned long>(fn->tilingKey), numBlocks, e.what());
        status = ACL_ERROR_RT_AICORE_EXCEPTION;
    }
    aclrtFree(dev);
    return status;
}
