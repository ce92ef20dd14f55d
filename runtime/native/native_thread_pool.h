/**
 * @file native_thread_pool.h
 * @brief The native kernel's persistent worker threads: created once, on the first launch that
 *        needs more than the calling thread, and reused by every later launch (no thread creation
 *        and no allocation per call).
 *
 * A launch never waits for a worker to wake up: the caller starts on the work at once, workers
 * join while the launch is open, and the task hands out its work in chunks, so a worker that
 * wakes late (a sleeping virtual CPU can take 100 us and more) just finds less left to do. A
 * launch too small to pay for a wake-up can leave sleeping workers asleep and take only those
 * still spinning after an earlier launch. Every thread has a fixed slot (the caller 0, worker i
 * slot i + 1), so a task can give each thread the same part of the data launch after launch.
 */
#ifndef ASCEND_EMA_ADAM_NATIVE_THREAD_POOL_H
#define ASCEND_EMA_ADAM_NATIVE_THREAD_POOL_H

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace ascend_ema_adam::native {

/** CPUs the process may run on (its affinity mask). */
uint32_t ProcessCpus();

class ThreadPool {
public:
    /** task(ctx, slot) runs on each thread taking part, `slot` being the thread's fixed slot
     *  (0: the caller); it pulls its work from ctx until none is left, so it must be correct for
     *  any subset of the slots taking part, slot 0 alone included. */
    using Task = void (*)(const void* ctx, uint32_t slot);

    /** The process's pool: ProcessCpus() threads, the caller included. */
    static ThreadPool& Get();

    /** The most threads Run uses (the caller included). */
    uint32_t MaxThreads() const { return static_cast<uint32_t>(workers_.size()) + 1U; }

    /**
     * Runs task on the calling thread (slot 0) and on workers 0 .. threads - 2 (slots 1 ..
     * threads - 1) that join while the caller is still inside its own task call; returns when
     * every call has returned, with the number of threads that took part. `wake` false leaves
     * sleeping workers asleep (only spinning ones can join). If another thread is inside Run,
     * the caller runs task alone.
     */
    uint32_t Run(uint32_t threads, Task task, const void* ctx, bool wake = true);

    /** Calls of Run so far, by any thread (tests count a kernel's pool launches with it). */
    uint64_t Launches() const { return launches_.load(std::memory_order_relaxed); }

    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

private:
    explicit ThreadPool(uint32_t threads);
    void WorkerLoop(uint32_t worker);
    bool TryJoin(uint64_t job, uint32_t worker);
    void Leave();

    std::mutex runMutex_;  // one Run at a time
    std::mutex mu_;        // guards sleeping and waking
    std::condition_variable wake_;
    std::condition_variable done_;
    // The current launch in one word: | sequence:32 | open:1 | limit:15 | active:16 |. Worker i
    // joins (active + 1) only while it is open and i < limit; the caller closes it when its own
    // task call returns and then waits for active to drop to 0. So task_ and ctx_ are read only by
    // threads inside the launch, and the next Run cannot overwrite them before all have left.
    std::atomic<uint64_t> state_{0};
    std::atomic<uint32_t> joined_{0};  // workers that took part in the current launch
    std::atomic<uint64_t> launches_{0};
    Task task_ = nullptr;
    const void* ctx_ = nullptr;
    std::vector<std::thread> workers_;
};

}  // namespace ascend_ema_adam::native

#endif  // ASCEND_EMA_ADAM_NATIVE_THREAD_POOL_H
