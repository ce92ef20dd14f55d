// tools/ascendc_check/run.py --emulate: kernels for the pipe-hazard checker's expect-tests (hazard_selftest.cpp). Each is a
// small GM -> UB -> vector -> UB -> GM pipeline over several chunks, written with the real AscendC API; the
// pipeline_* ones are correct (no hazard may be reported), each of the others breaks its synchronisation in one
// way a kernel author could: a DeQue left out, a FreeTensor issued before the vector pass has read the buffer, a
// manual SetFlag/WaitFlag pair left out, a flag set twice, a wait without a set.
#include "kernel_operator.h"

using namespace AscendC;

namespace {

constexpr uint32_t kChunk = 256;  // floats per chunk
constexpr uint32_t kChunkBytes = kChunk * sizeof(float);

enum class QueueBug { kNone, kMissingDeque, kFreeBeforeRead };

// Double-buffered queues: EnQue / DeQue and AllocTensor / FreeTensor carry the flags.
template <QueueBug kBug>
__aicore__ inline void QueuePipeline(GM_ADDR x, GM_ADDR y, uint32_t chunks)
{
    TPipe pipe;
    TQue<TPosition::VECIN, 2> inQueue;
    TQue<TPosition::VECOUT, 2> outQueue;
    pipe.InitBuffer(inQueue, 2, kChunkBytes);
    pipe.InitBuffer(outQueue, 2, kChunkBytes);
    GlobalTensor<float> gx, gy;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), chunks * kChunk);
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), chunks * kChunk);
    for (uint32_t c = 0; c < chunks; ++c) {
        LocalTensor<float> in = inQueue.AllocTensor<float>();
        DataCopyPad(in, gx[c * kChunk], DataCopyExtParams{1, kChunkBytes, 0, 0, 0}, DataCopyPadExtParams<float>{});
        LocalTensor<float> ready = in;
        if constexpr (kBug != QueueBug::kMissingDeque) {
            inQueue.EnQue(in);
            ready = inQueue.DeQue<float>();
        }
        LocalTensor<float> out = outQueue.AllocTensor<float>();
        if constexpr (kBug == QueueBug::kFreeBeforeRead) {
            inQueue.FreeTensor(ready);  // the next copy into this buffer may start before Muls has read it
        }
        Muls(out, ready, 2.0f, kChunk);
        if constexpr (kBug != QueueBug::kFreeBeforeRead) {
            inQueue.FreeTensor(ready);
        }
        outQueue.EnQue(out);
        LocalTensor<float> done = outQueue.DeQue<float>();
        DataCopyPad(gy[c * kChunk], done, DataCopyExtParams{1, kChunkBytes, 0, 0, 0});
        outQueue.FreeTensor(done);
    }
}

enum class FlagBug { kNone, kMissingPair, kSetTwice, kWaitWithoutSet };

// One TBuf and manual flags between the pipes.
template <FlagBug kBug>
__aicore__ inline void FlagPipeline(GM_ADDR x, GM_ADDR y, uint32_t chunks)
{
    TPipe pipe;
    TBuf<TPosition::VECCALC> buf;
    pipe.InitBuffer(buf, kChunkBytes);
    GlobalTensor<float> gx, gy;
    gx.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x), chunks * kChunk);
    gy.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y), chunks * kChunk);
    LocalTensor<float> t = buf.Get<float>();
    const TEventID toVector = GetTPipePtr()->FetchEventID(HardEvent::MTE2_V);
    const TEventID toOut = GetTPipePtr()->FetchEventID(HardEvent::V_MTE3);
    const TEventID toIn = GetTPipePtr()->FetchEventID(HardEvent::MTE3_MTE2);
    for (uint32_t c = 0; c < chunks; ++c) {
        DataCopyPad(t, gx[c * kChunk], DataCopyExtParams{1, kChunkBytes, 0, 0, 0}, DataCopyPadExtParams<float>{});
        if constexpr (kBug == FlagBug::kSetTwice) {
            SetFlag<HardEvent::MTE2_V>(toVector);
        }
        if constexpr (kBug != FlagBug::kMissingPair && kBug != FlagBug::kWaitWithoutSet) {
            SetFlag<HardEvent::MTE2_V>(toVector);
        }
        if constexpr (kBug != FlagBug::kMissingPair) {
            WaitFlag<HardEvent::MTE2_V>(toVector);
        }
        Muls(t, t, 2.0f, kChunk);
        SetFlag<HardEvent::V_MTE3>(toOut);
        WaitFlag<HardEvent::V_MTE3>(toOut);
        DataCopyPad(gy[c * kChunk], t, DataCopyExtParams{1, kChunkBytes, 0, 0, 0});
        SetFlag<HardEvent::MTE3_MTE2>(toIn);
        WaitFlag<HardEvent::MTE3_MTE2>(toIn);
    }
}

}  // namespace

extern "C" __global__ __aicore__ void hazard_queue_ok(GM_ADDR x, GM_ADDR y, uint32_t chunks)
{
    QueuePipeline<QueueBug::kNone>(x, y, chunks);
}
extern "C" __global__ __aicore__ void hazard_missing_deque(GM_ADDR x, GM_ADDR y, uint32_t chunks)
{
    QueuePipeline<QueueBug::kMissingDeque>(x, y, chunks);
}
extern "C" __global__ __aicore__ void hazard_free_before_read(GM_ADDR x, GM_ADDR y, uint32_t chunks)
{
    QueuePipeline<QueueBug::kFreeBeforeRead>(x, y, chunks);
}
extern "C" __global__ __aicore__ void hazard_flags_ok(GM_ADDR x, GM_ADDR y, uint32_t chunks)
{
    FlagPipeline<FlagBug::kNone>(x, y, chunks);
}
extern "C" __global__ __aicore__ void hazard_missing_flag_pair(GM_ADDR x, GM_ADDR y, uint32_t chunks)
{
    FlagPipeline<FlagBug::kMissingPair>(x, y, chunks);
}
extern "C" __global__ __aicore__ void hazard_flag_set_twice(GM_ADDR x, GM_ADDR y, uint32_t chunks)
{
    FlagPipeline<FlagBug::kSetTwice>(x, y, chunks);
}
extern "C" __global__ __aicore__ void hazard_wait_without_set(GM_ADDR x, GM_ADDR y, uint32_t chunks)
{
    FlagPipeline<FlagBug::kWaitWithoutSet>(x, y, chunks);
}
