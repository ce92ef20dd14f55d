/**
 * @file run_support.h
 * @brief tools/ascendc_check/run.py --run: launches a kernel compiled against the real AscendC headers in
 *        CPU-debug mode, like asc-tools' ICPU_RUN_KF (kern_fwk.h): AIV mode, the tiling key in
 *        g_tilingKey, one forked process per block with block_idx set. The intrinsics do nothing, so
 *        no data is computed; what runs is the class library's own CPU-debug bookkeeping and checks
 *        (TPipe/TQue buffer accounting, LocalTensor bounds, Cast round modes, DataCopyPad and vector
 *        operand checks), each of which raises SIGABRT on a violation.
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_RUN_SUPPORT_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_RUN_SUPPORT_H

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "stub_def.h"

namespace ascendc_check {

/** One GM<->UB copy a block issued (gm_copy_trace.h): bursts of burstBytes at gm, gm + burstBytes + gapBytes, ...
 *  elemBytes: the element width the intrinsic moves (0: not given); bursts 0, gm 0: a form not decoded. */
struct GmCopy {
    const char* intrinsic;
    uint32_t block;
    bool toGm;
    uint32_t elemBytes;
    uint64_t gm;
    uint64_t bursts;
    uint64_t burstBytes;
    uint64_t gapBytes;
};

/** A CPU-debug assertion of the list decoder that the device compiles out and CANN's launcher layout fails
 *  (list_decoder_device_asserts.h), with how often it failed. */
struct ToleratedAssert {
    std::string expression;
    uint64_t count;
};

/**
 * The copies of a launch's blocks, gathered in memory shared with the forked blocks. Off until Open(): then the
 * stand-in's copy intrinsics append to it (the block whose copy would exceed `capacity` since the last Take()
 * aborts: a runaway walk), and Take() hands the parent what the blocks issued since the last Take().
 */
class GmCopyTrace {
public:
    static void Open(uint64_t capacity);
    static std::vector<GmCopy> Take();
    /** The tolerated decoder assertions since Open(), summed over every block. */
    static std::vector<ToleratedAssert> ToleratedAsserts();
};

/** As ICPU_RUN_KF's handler: the library's own backtrace (asc-tools stub_backtrace.cpp), then the signal. */
inline void OnFatalSignal(int sig)
{
    AscendC::BacktracePrint(sig);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

/** Host memory a driver makes inaccessible in its blocks (mprotect), named for the report of a block that
 *  touches it. */
struct GuardedRegion {
    const void* base;
    uint64_t bytes;
    const char* what;
};
/** The guarded regions of the next launches (set before RunBlocks; replaces the previous ones). */
void SetGuardedRegions(std::vector<GuardedRegion> regions);
/** SIGSEGV/SIGBUS in a block: "run: block N touched <what> at <address>" when the address is in a guarded
 *  region, then OnFatalSignal. */
void OnMemoryFault(int sig, siginfo_t* info, void* context);

/** Runs body() once per block, each in its own process; returns the number of blocks that failed. Failed blocks
 *  are always reported, the launch as a whole only with `report`. */
template <class Body>
int RunBlocks(const char* what, uint32_t blockDim, uint64_t tilingKey, Body body, bool report = true)
{
    AscendC::SetKernelMode(KernelMode::AIV_MODE);
    AscendC::InitSocVersion();
    AscendC::SetGCoreType(AscendC::AIV_TYPE);
    g_taskRation = 1;  // AIV-only kernel: block index = block_idx
    g_tilingKey = tilingKey;
    block_num = blockDim;
    int failed = 0;
    for (uint32_t block = 0; block < blockDim; ++block) {
        std::fflush(stdout);
        std::fflush(stderr);
        const pid_t pid = fork();
        if (pid == 0) {
            std::setvbuf(stdout, nullptr, _IONBF, 0);  // the library logs, then raise(SIGABRT): keep the log
            for (int sig : {SIGABRT, SIGFPE, SIGILL}) std::signal(sig, OnFatalSignal);
            struct sigaction fault {};
            fault.sa_sigaction = OnMemoryFault;
            fault.sa_flags = SA_SIGINFO;
            sigaction(SIGSEGV, &fault, nullptr);
            sigaction(SIGBUS, &fault, nullptr);
            block_idx = block;
            sub_block_idx = 0;
            body();
            std::fflush(stdout);
            _exit(0);
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            ++failed;
            std::printf("run: %s: block %u/%u %s %d\n", what, block, blockDim,
                        WIFSIGNALED(status) ? "died with signal" : "exited with", WIFSIGNALED(status)
                            ? WTERMSIG(status) : WEXITSTATUS(status));
        }
    }
    if (report || failed != 0) {
        std::printf("run: %s: %u block(s), %s\n", what, blockDim, failed == 0 ? "ok" : "FAILED");
    }
    return failed;
}

}  // namespace ascendc_check

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_RUN_SUPPORT_H
