/**
 * @file apply_fused_ema_adam_kernels_bindings.cpp
 * @brief ApplyFusedEmaAdam's _kernels bindings: its tiling, the kernel on the twin and the native
 *        kernel on numpy buffers.
 */
#include <optional>

#include "apply_fused_ema_adam_native.h"
#include "apply_fused_ema_adam_tiling.h"
#include "apply_fused_ema_adam_twin_run.h"
#include "kernels_bindings.h"

namespace {

using namespace ascend_ema_adam::kernels_bindings;
namespace fused_op = ascend_ema_adam::apply_fused_ema_adam;

py::dict TilingToDict(const fused_op::ApplyFusedEmaAdamTilingResult& r)
{
    const ApplyFusedEmaAdamTilingData& t = r.data;
    py::dict d = LaunchToDict(r);
    d["total_length"] = t.totalLength;
    d["blocks_per_core"] = t.blocksPerCore;
    d["used_core_num"] = t.usedCoreNum;
    d["big_core_num"] = t.bigCoreNum;
    d["align_elems"] = t.alignElems;
    d["chunk_length"] = t.chunkLength;
    d["buffer_num"] = t.bufferNum;
    py::list ranges;
    for (uint32_t core = 0; core < t.usedCoreNum; ++core) {
        const aea::ElementRange range = fused_op::ApplyFusedEmaAdamCoreRange(t, core);
        ranges.append(py::make_tuple(range.begin, range.end));
    }
    d["core_ranges"] = ranges;
    return d;
}

py::dict Launch(const py::buffer& grad, const py::buffer& var, const py::buffer& m,
                const py::buffer& v, const py::buffer& s, const py::buffer& step,
                uint64_t numel, const std::string& dtype, const aea::Attrs& attrs,
                const std::string& platformName, uint32_t threads,
                const std::string& overflowMode)
{
    const twin::FloatOverflowMode overflow = ParseOverflowMode(overflowMode);
    const aea::DataType dt = ParseDtype(dtype);
    const aea::Platform platform = aea::FindPlatform(platformName);
    const fused_op::ApplyFusedEmaAdamTilingResult tiling =
        fused_op::ComputeApplyFusedEmaAdamTiling(numel, dt, attrs, platform);
    const size_t bytes = numel * aea::DataTypeSize(dt);
    fused_op::ApplyFusedEmaAdamBuffers b{};
    b.grad = BufferPtr(grad, "grad", bytes, false);
    void* varPtr = BufferPtr(var, "var", bytes, true);
    void* mPtr = BufferPtr(m, "m", bytes, true);
    void* vPtr = BufferPtr(v, "v", bytes, true);
    void* sPtr = BufferPtr(s, "s", bytes, true);
    b.step = static_cast<const int64_t*>(BufferPtr(step, "step", sizeof(int64_t), false));
    b.var = b.varOut = varPtr;
    b.m = b.mOut = mPtr;
    b.v = b.vOut = vPtr;
    b.s = b.sOut = sPtr;

    twin::LaunchResult result;
    {
        py::gil_scoped_release release;
        result = fused_op::RunApplyFusedEmaAdamOnTwin(tiling, platform, b, threads, overflow);
    }
    return TwinLaunchToDict(TilingToDict(tiling), result);
}

/** The native kernel on contiguous buffers: in place, or into the optional *_out buffers. */
py::dict LaunchNative(const py::buffer& grad, const py::buffer& var, const py::buffer& m,
                      const py::buffer& v, const py::buffer& s, const py::buffer& step,
                      uint64_t numel, const std::string& dtype, const aea::Attrs& attrs,
                      uint32_t threads, const std::string& isa,
                      uint64_t minElemsPerThread, uint64_t streamingBytes,
                      const std::optional<py::buffer>& varOut,
                      const std::optional<py::buffer>& mOut, const std::optional<py::buffer>& vOut,
                      const std::optional<py::buffer>& sOut)
{
    const aea::DataType dt = ParseDtype(dtype);
    const fused_op::ApplyFusedEmaAdamTilingResult tiling =
        fused_op::ComputeApplyFusedEmaAdamTiling(numel, dt, attrs, aea::CpuPlatform());
    const size_t bytes = numel * aea::DataTypeSize(dt);
    fused_op::ApplyFusedEmaAdamBuffers b{};
    b.grad = BufferPtr(grad, "grad", bytes, false);
    b.step = static_cast<const int64_t*>(BufferPtr(step, "step", sizeof(int64_t), false));
    const auto inOut = [bytes](const py::buffer& in, const std::optional<py::buffer>& out,
                               const char* name, const char* outName, const void** inPtr,
                               void** outPtr) {
        *inPtr = BufferPtr(in, name, bytes, !out.has_value());
        *outPtr = out ? BufferPtr(*out, outName, bytes, true) : const_cast<void*>(*inPtr);
    };
    inOut(var, varOut, "var", "var_out", &b.var, &b.varOut);
    inOut(m, mOut, "m", "m_out", &b.m, &b.mOut);
    inOut(v, vOut, "v", "v_out", &b.v, &b.vOut);
    inOut(s, sOut, "s", "s_out", &b.s, &b.sOut);

    const aea::NativeOptions options =
        NativeOptionsOf(threads, isa, minElemsPerThread, streamingBytes);
    uint32_t used = 0;
    try {
        py::gil_scoped_release release;
        used = fused_op::RunApplyFusedEmaAdamNative(tiling, b, options);
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    py::dict out;
    out["tiling"] = TilingToDict(tiling);
    out["isa"] = isa.empty() ? std::string(aea::NativeIsa()) : isa;
    out["threads"] = used;
    return out;
}

}  // namespace

AEA_KERNELS_BINDINGS(apply_fused_ema_adam)
{
    mod.def("compute_apply_fused_ema_adam_tiling",
            [](uint64_t numel, const std::string& dtype, const std::string& platform,
               const aea::Attrs& attrs, uint32_t vectorCoreNum, uint32_t ubSize) {
                aea::Platform p = aea::FindPlatform(platform);
                if (vectorCoreNum != 0) p.vectorCoreNum = vectorCoreNum;
                if (ubSize != 0) p.ubSize = ubSize;
                try {
                    return TilingToDict(fused_op::ComputeApplyFusedEmaAdamTiling(
                        numel, ParseDtype(dtype), attrs, p));
                } catch (const std::invalid_argument& e) {
                    throw py::value_error(e.what());
                }
            },
            py::arg("numel"), py::arg("dtype"), py::arg("platform") = "cpu",
            py::arg("attrs") = aea::Attrs(), py::arg("vector_core_num") = 0,
            py::arg("ub_size") = 0,
            "Host tiling for numel elements (platform preset, optionally overriding its core "
            "count or UB size).");

    mod.def("launch_apply_fused_ema_adam", &Launch, py::arg("grad"), py::arg("var"), py::arg("m"),
            py::arg("v"), py::arg("s"), py::arg("step"), py::arg("numel"), py::arg("dtype"),
            py::arg("attrs"), py::arg("platform") = "cpu", py::arg("threads") = 0,
            py::arg("overflow_mode") = "inf_nan",
            "Run the kernel in place on contiguous buffers through the twin in the device's "
            "float-overflow mode; returns the tiling and per-block counters.");

    mod.def("launch_native_apply_fused_ema_adam", &LaunchNative, py::arg("grad"), py::arg("var"),
            py::arg("m"), py::arg("v"), py::arg("s"), py::arg("step"), py::arg("numel"),
            py::arg("dtype"), py::arg("attrs"), py::arg("threads") = 0, py::arg("isa") = "",
            py::arg("min_elems_per_thread") = aea::kNativeMinElemsPerThread,
            py::arg("streaming_bytes") = aea::kNativeStreamingBytes,
            py::arg("var_out") = py::none(), py::arg("m_out") = py::none(),
            py::arg("v_out") = py::none(), py::arg("s_out") = py::none(),
            "Run the native CPU kernel on contiguous buffers, in place unless *_out are given; "
            "returns the tiling, the instruction set and the threads used.");
}
