// ascendc-check: expect-ok
// Rig self-test: a known-good fp32 Add kernel in the documented style (TPipe, TQue double buffering,
// DataCopy GM<->UB, count-form Add, GET_TILING_DATA of a registered struct, TILING_KEY_IS).
#include "kernel_operator.h"

struct AddTilingData {
    uint32_t totalLength;  // elements per core, a multiple of tileLength
    uint32_t tileLength;   // elements per tile, a multiple of 8 (32 B)
};

constexpr int32_t BUFFER_NUM = 2;

class KernelAdd {
public:
    __aicore__ inline KernelAdd() {}
    __aicore__ inline void Init(GM_ADDR x, GM_ADDR y, GM_ADDR z, const AddTilingData& tiling)
    {
        tileLength_ = tiling.tileLength;
        tileNum_ = tiling.totalLength / tiling.tileLength;
        const uint64_t offset = static_cast<uint64_t>(tiling.totalLength) * AscendC::GetBlockIdx();
        xGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(x) + offset, tiling.totalLength);
        yGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(y) + offset, tiling.totalLength);
        zGm_.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(z) + offset, tiling.totalLength);
        pipe_.InitBuffer(inQueueX_, BUFFER_NUM, tileLength_ * sizeof(float));
        pipe_.InitBuffer(inQueueY_, BUFFER_NUM, tileLength_ * sizeof(float));
        pipe_.InitBuffer(outQueueZ_, BUFFER_NUM, tileLength_ * sizeof(float));
    }
    __aicore__ inline void Process()
    {
        for (uint32_t i = 0; i < tileNum_; ++i) {
            CopyIn(i);
            Compute();
            CopyOut(i);
        }
    }

private:
    __aicore__ inline void CopyIn(uint32_t i)
    {
        AscendC::LocalTensor<float> x = inQueueX_.AllocTensor<float>();
        AscendC::LocalTensor<float> y = inQueueY_.AllocTensor<float>();
        AscendC::DataCopy(x, xGm_[i * tileLength_], tileLength_);
        AscendC::DataCopy(y, yGm_[i * tileLength_], tileLength_);
        inQueueX_.EnQue(x);
        inQueueY_.EnQue(y);
    }
    __aicore__ inline void Compute()
    {
        AscendC::LocalTensor<float> x = inQueueX_.DeQue<float>();
        AscendC::LocalTensor<float> y = inQueueY_.DeQue<float>();
        AscendC::LocalTensor<float> z = outQueueZ_.AllocTensor<float>();
        AscendC::Add(z, x, y, static_cast<int32_t>(tileLength_));
        outQueueZ_.EnQue<float>(z);
        inQueueX_.FreeTensor(x);
        inQueueY_.FreeTensor(y);
    }
    __aicore__ inline void CopyOut(uint32_t i)
    {
        AscendC::LocalTensor<float> z = outQueueZ_.DeQue<float>();
        AscendC::DataCopy(zGm_[i * tileLength_], z, tileLength_);
        outQueueZ_.FreeTensor(z);
    }

    AscendC::TPipe pipe_;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueX_;
    AscendC::TQue<AscendC::TPosition::VECIN, BUFFER_NUM> inQueueY_;
    AscendC::TQue<AscendC::TPosition::VECOUT, BUFFER_NUM> outQueueZ_;
    AscendC::GlobalTensor<float> xGm_;
    AscendC::GlobalTensor<float> yGm_;
    AscendC::GlobalTensor<float> zGm_;
    uint32_t tileLength_ = 0;
    uint32_t tileNum_ = 0;
};

extern "C" __global__ __aicore__ void add_custom(GM_ADDR x, GM_ADDR y, GM_ADDR z, GM_ADDR workspace, GM_ADDR tiling)
{
    KERNEL_TASK_TYPE_DEFAULT(KERNEL_TYPE_AIV_ONLY);
    REGISTER_TILING_DEFAULT(AddTilingData);
    GET_TILING_DATA(tilingData, tiling);
    if (TILING_KEY_IS(1)) {
        KernelAdd op;
        op.Init(x, y, z, tilingData);
        op.Process();
    }
}
