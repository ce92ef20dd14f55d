/**
 * @file run_support.h
 * @brief tools/ascendc_check --run: launches a kernel compiled against the real AscendC headers in
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

#include "stub_def.h"

namespace ascendc_check {

/** As ICPU_RUN_KF's handler: the library's own backtrace (asc-tools stub_backtrace.cpp), then the signal. */
inline void OnFatalSignal(int sig)
{
    AscendC::BacktracePrint(sig);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

/** Runs body() once per block, each in its own process; returns the number of blocks that failed. */
template <class Body>
int RunBlocks(const char* what, uint32_t blockDim, uint64_t tilingKey, Body body)
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
            for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, OnFatalSignal);
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
    std::printf("run: %s: %u block(s), %s\n", what, blockDim, failed == 0 ? "ok" : "FAILED");
    return failed;
}

}  // namespace ascendc_check

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_RUN_SUPPORT_H
