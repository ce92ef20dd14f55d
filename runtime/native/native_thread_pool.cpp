/**
 * @file native_thread_pool.cpp
 * @brief ThreadPool: workers spin briefly after each task, so back-to-back launches (one per tensor
 *        of a model) skip the sleep/wake round trip, then sleep on a condition variable; only
 *        launches that ask for it wake them.
 */
#include "native_thread_pool.h"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <new>

namespace ascend_ema_adam::native {

namespace {

/** How long a worker (or the caller, waiting for the workers) polls before it sleeps. Short: a
 *  spinning thread takes a core from whatever the program does next. */
constexpr std::chrono::microseconds kSpin{50};

inline void CpuRelax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
}

/** Polls pred for up to kSpin; true if it became true. */
template <class Pred>
bool SpinUntil(Pred pred)
{
    const auto deadline = std::chrono::steady_clock::now() + kSpin;
    for (;;) {
        for (int i = 0; i < 64; ++i) {
            if (pred()) {
                return true;
            }
            CpuRelax();
        }
        if (std::chrono::steady_clock::now() >= deadline) {
            return false;
        }
    }
}

std::atomic<ThreadPool*> g_pool{nullptr};
std::mutex g_poolMutex;

/** A forked child has only the forking thread: drop (leak) the parent's pool so the child makes
 *  its own on first use instead of waiting forever for workers that do not exist. */
void ForgetPoolInChild()
{
    g_pool.store(nullptr, std::memory_order_relaxed);
    new (&g_poolMutex) std::mutex();  // its state at the fork is unknown
}

}  // namespace

uint32_t ProcessCpus()
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
        return static_cast<uint32_t>(CPU_COUNT(&set));
    }
    const unsigned hw = std::thread::hardware_concurrency();
    return hw != 0 ? hw : 1U;
}

ThreadPool& ThreadPool::Get()
{
    ThreadPool* pool = g_pool.load(std::memory_order_acquire);
    if (pool == nullptr) {
        std::lock_guard<std::mutex> lock(g_poolMutex);
        pool = g_pool.load(std::memory_order_relaxed);
        if (pool == nullptr) {
            static const int registered = pthread_atfork(nullptr, nullptr, &ForgetPoolInChild);
            (void)registered;
            // Never destroyed: joining threads from a static destructor at exit can deadlock.
            pool = new ThreadPool(ProcessCpus());
            g_pool.store(pool, std::memory_order_release);
        }
    }
    return *pool;
}

namespace {

constexpr uint64_t kActiveMask = 0xffffU;
constexpr int kLimitShift = 16;
constexpr uint64_t kLimitMask = 0x7fffU;
constexpr uint64_t kOpen = uint64_t{1} << 31;
constexpr int kSequenceShift = 32;

uint64_t Active(uint64_t state) { return state & kActiveMask; }
uint64_t Sequence(uint64_t state) { return state >> kSequenceShift; }

}  // namespace

ThreadPool::ThreadPool(uint32_t threads)
{
    const uint32_t workers = threads - 1U < kLimitMask ? threads - 1U : kLimitMask;
    workers_.reserve(workers);
    for (uint32_t i = 0; i < workers; ++i) {
        workers_.emplace_back([this, i] { WorkerLoop(i); });
        workers_.back().detach();
    }
}

uint32_t ThreadPool::Run(uint32_t threads, Task task, const void* ctx, bool wake)
{
    launches_.fetch_add(1, std::memory_order_relaxed);
    const uint64_t limit = threads < MaxThreads() ? threads - 1U : MaxThreads() - 1U;
    std::unique_lock<std::mutex> run(runMutex_, std::try_to_lock);
    if (threads <= 1U || limit == 0 || !run.owns_lock()) {
        task(ctx, 0);
        return 1;
    }
    task_ = task;
    ctx_ = ctx;
    joined_.store(0, std::memory_order_relaxed);
    const auto open = [this, limit] {
        const uint64_t sequence = Sequence(state_.load(std::memory_order_relaxed)) + 1U;
        state_.store((sequence << kSequenceShift) | kOpen | (limit << kLimitShift),
                     std::memory_order_release);
    };
    if (wake) {
        {
            std::lock_guard<std::mutex> lock(mu_);  // a worker checks state_ under mu_ before sleeping
            open();
        }
        wake_.notify_all();
    } else {
        open();  // only workers still spinning after an earlier launch see it
    }
    task(ctx, 0);
    // Close: no worker joins from here on; wait only for those already inside the task.
    state_.fetch_and(~kOpen, std::memory_order_acq_rel);
    const auto allLeft = [this] { return Active(state_.load(std::memory_order_acquire)) == 0U; };
    if (!SpinUntil(allLeft)) {
        std::unique_lock<std::mutex> lock(mu_);
        done_.wait(lock, allLeft);
    }
    return joined_.load(std::memory_order_relaxed) + 1U;
}

bool ThreadPool::TryJoin(uint64_t job, uint32_t worker)
{
    uint64_t state = state_.load(std::memory_order_acquire);
    while (Sequence(state) == Sequence(job) && (state & kOpen) != 0U &&
           worker < ((state >> kLimitShift) & kLimitMask)) {
        if (state_.compare_exchange_weak(state, state + 1U, std::memory_order_acq_rel,
                                         std::memory_order_acquire)) {
            joined_.fetch_add(1, std::memory_order_relaxed);
            return true;
        }
    }
    return false;
}

void ThreadPool::Leave()
{
    const uint64_t before = state_.fetch_sub(1U, std::memory_order_acq_rel);
    if (Active(before) == 1U && (before & kOpen) == 0U) {
        std::lock_guard<std::mutex> lock(mu_);  // the caller may be between its check and its wait
        done_.notify_one();
    }
}

void ThreadPool::WorkerLoop(uint32_t worker)
{
    uint64_t seen = 0;  // sequence of the last launch this worker looked at
    for (;;) {
        const auto newLaunch = [this, &seen] {
            return Sequence(state_.load(std::memory_order_acquire)) != seen;
        };
        if (!SpinUntil(newLaunch)) {
            std::unique_lock<std::mutex> lock(mu_);
            wake_.wait(lock, newLaunch);
        }
        const uint64_t job = state_.load(std::memory_order_acquire);
        seen = Sequence(job);
        if (TryJoin(job, worker)) {
            task_(ctx_, worker + 1U);
            Leave();
        }
    }
}

}  // namespace ascend_ema_adam::native
