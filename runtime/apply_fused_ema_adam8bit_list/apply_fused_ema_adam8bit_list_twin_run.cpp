/**
 * @file apply_fused_ema_adam8bit_list_twin_run.cpp
 * @brief RunAdam8bitListOnTwin: encodes the lists as CANN's launcher does (1-D entries), registers
 *        the launch's GM regions and starts the kernel's blocks.
 */
#include "apply_fused_ema_adam8bit_list_twin_run.h"

#include <deque>
#include <stdexcept>
#include <utility>
#include <vector>

#include "twin_list_launch.h"

extern "C" void apply_fused_ema_adam8bit_list(
    GM_ADDR grads, GM_ADDR vars, GM_ADDR ms, GM_ADDR vs, GM_ADDR mAbsmaxes, GM_ADDR vAbsmaxes,
    GM_ADDR ss, GM_ADDR modelCopies, GM_ADDR qmapM, GM_ADDR qmapV, GM_ADDR step,
    GM_ADDR gradScale, GM_ADDR foundInf, GM_ADDR lr, GM_ADDR emaDecay, GM_ADDR varsRef,
    GM_ADDR ssRef, GM_ADDR modelCopiesRef, GM_ADDR msRef, GM_ADDR vsRef, GM_ADDR mAbsmaxesRef,
    GM_ADDR vAbsmaxesRef, GM_ADDR workspace, GM_ADDR tiling);

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

namespace {

GM_ADDR Gm(const void* p)
{
    return reinterpret_cast<GM_ADDR>(const_cast<void*>(p));
}

/** The launch's GM: every tensor the lists point to, the list descriptors and the scalars. */
class LaunchMemory {
public:
    /** Entry i of `list` as a 1-D tensor of counts[i] elements (kFramework layout); null: an
     *  absent list (an empty one). With `elemBytes` nonzero the tensors become GM regions (once:
     *  an output list repeats its input list's tensors). */
    GM_ADDR List(const void* const* list, const std::vector<uint64_t>& counts, uint32_t elemBytes)
    {
        std::vector<twin::ListEntry> entries;
        if (list != nullptr) {
            for (size_t i = 0; i < counts.size(); ++i) {
                entries.push_back({list[i], {static_cast<int64_t>(counts[i])}});
                if (elemBytes != 0 && list[i] != nullptr && counts[i] != 0) {
                    regions_.push_back({list[i], counts[i] * elemBytes});
                }
            }
        }
        lists_.push_back(twin::EncodeList(entries, twin::ListLayout::kFramework));
        regions_.push_back(lists_.back().Region());
        return lists_.back().Addr();
    }

    GM_ADDR Scalar(const void* p, size_t bytes)
    {
        if (p != nullptr) {
            regions_.push_back({p, bytes});
        }
        return Gm(p);
    }

    std::vector<twin::GmRegion> TakeRegions() { return std::move(regions_); }

private:
    std::deque<twin::EncodedList> lists_;  // a deque: the kernel holds the descriptors' addresses
    std::vector<twin::GmRegion> regions_;
};

}  // namespace

twin::LaunchResult RunAdam8bitListOnTwin(const Adam8bitTilingResult& tiling,
                                         const Platform& platform,
                                         const ApplyFusedEmaAdam8bitListBuffers& b,
                                         uint32_t threads, twin::FloatOverflowMode overflowMode)
{
    const ApplyFusedEmaAdam8bitListTilingData& t = tiling.data;
    const Adam8bitDtypes& d = tiling.dtypes;
    if (b.tensorNum != t.tensorNum || d.hasCopy != (b.copies != nullptr) ||
        (t.hasGradScale != 0U) != (b.gradScale != nullptr) ||
        (t.hasFoundInf != 0U) != (b.foundInf != nullptr) || b.step == nullptr ||
        b.qmapM == nullptr || b.qmapV == nullptr ||
        (b.tensorNum > 0 && (t.hasEma != 0U) != (b.ss != nullptr)) ||
        (t.hasLrTensor != 0U) != (b.lr != nullptr) ||
        (t.hasEmaDecayTensor != 0U) != (b.emaDecay != nullptr)) {
        throw std::invalid_argument("RunAdam8bitListOnTwin: the buffers do not match the tiling");
    }
    if (tiling.blockDim == 0) {
        return {};
    }
    std::vector<uint64_t> numels(b.numels, b.numels + b.tensorNum);
    std::vector<uint64_t> blocks;
    for (uint64_t n : numels) {
        blocks.push_back((n + 255U) / 256U);
    }
    const uint32_t g = DataTypeSize(d.grad);
    const uint32_t p = DataTypeSize(d.param);
    const uint32_t c = d.hasCopy ? DataTypeSize(d.copy) : 0U;
    LaunchMemory mem;
    GM_ADDR grads = mem.List(b.grads, numels, g);
    GM_ADDR vars = mem.List(b.vars, numels, p);
    GM_ADDR ms = mem.List(b.ms, numels, 1);
    GM_ADDR vs = mem.List(b.vs, numels, 1);
    GM_ADDR mAbsmaxes = mem.List(b.mAbsmaxes, blocks, 4);
    GM_ADDR vAbsmaxes = mem.List(b.vAbsmaxes, blocks, 4);
    GM_ADDR ss = mem.List(b.ss, numels, 4);
    GM_ADDR copiesIn = mem.List(b.copies, numels, c);
    GM_ADDR qmapM = mem.Scalar(b.qmapM, 256 * sizeof(float));
    GM_ADDR qmapV = mem.Scalar(b.qmapV, 256 * sizeof(float));
    GM_ADDR step = mem.Scalar(b.step, sizeof(int64_t));
    GM_ADDR gradScale = mem.Scalar(b.gradScale, sizeof(float));
    GM_ADDR foundInf = mem.Scalar(b.foundInf, sizeof(float));
    GM_ADDR lr = mem.Scalar(b.lr, sizeof(float));
    GM_ADDR emaDecay = mem.Scalar(b.emaDecay, sizeof(float));
    GM_ADDR varsRef = mem.List(b.vars, numels, 0);
    GM_ADDR msRef = mem.List(b.ms, numels, 0);
    GM_ADDR vsRef = mem.List(b.vs, numels, 0);
    GM_ADDR mAbsmaxesRef = mem.List(b.mAbsmaxes, blocks, 0);
    GM_ADDR vAbsmaxesRef = mem.List(b.vAbsmaxes, blocks, 0);
    GM_ADDR ssRef = mem.List(b.ss, numels, 0);
    GM_ADDR copiesRef = mem.List(b.copies, numels, 0);

    ApplyFusedEmaAdam8bitListTilingData tilingData = tiling.data;  // the launch's own GM copy
    twin::LaunchConfig cfg;
    cfg.blockDim = tiling.blockDim;
    cfg.tilingKey = tiling.tilingKey;
    cfg.ubBytes = platform.ubSize;
    cfg.threads = threads;
    cfg.overflowMode = overflowMode;
    cfg.gm = mem.TakeRegions();
    cfg.gm.push_back({&tilingData, sizeof(tilingData)});
    return twin::Launch(&::apply_fused_ema_adam8bit_list, cfg, grads, vars, ms, vs, mAbsmaxes,
                        vAbsmaxes, ss, copiesIn, qmapM, qmapV, step, gradScale, foundInf, lr,
                        emaDecay, varsRef, ssRef, copiesRef, msRef, vsRef, mAbsmaxesRef,
                        vAbsmaxesRef, nullptr, Gm(&tilingData));
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list
