/**
 * @file kernels_bindings.h
 * @brief What the _kernels module's bindings share: the registry each operator's bindings file
 *        (csrc/ops/<op>/<op>_kernels_bindings.cpp) adds itself to, and the numpy-buffer and
 *        dict helpers.
 */
#ifndef ASCEND_EMA_ADAM_KERNELS_BINDINGS_H
#define ASCEND_EMA_ADAM_KERNELS_BINDINGS_H

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <utility>

#include "data_type.h"
#include "module_registry.h"
#include "ema_adam_params.h"
#include "native_runtime.h"
#include "twin_launch.h"

namespace ascend_ema_adam::kernels_bindings {

namespace py = pybind11;
namespace aea = ascend_ema_adam;

/** A float dtype of the C++ table by name ("float32"). */
inline aea::DataType ParseDtype(const std::string& name)
{
    const aea::DataTypeInfo* info = aea::FindDataTypeByName(name.c_str());
    if (info != nullptr && info->isFloat) {
        return info->type;
    }
    std::string names;
    for (const aea::DataTypeInfo& entry : aea::kDataTypes) {
        names += entry.isFloat ? (names.empty() ? "" : ", ") + std::string(entry.name) : "";
    }
    throw py::value_error("dtype must be one of " + names + ", got '" + name + "'");
}

/** The device's float-overflow mode by name: "inf_nan" (IEEE, A2/A3's default) or "saturation". */
inline twin::FloatOverflowMode ParseOverflowMode(const std::string& name)
{
    if (name == "inf_nan") return twin::FloatOverflowMode::InfNan;
    if (name == "saturation") return twin::FloatOverflowMode::Saturation;
    throw py::value_error("overflow_mode must be 'inf_nan' or 'saturation', got '" + name + "'");
}

/** What every operator's tiling result holds: key, launch size, UB and the fp32 attributes. */
template <class Result>
py::dict LaunchToDict(const Result& r)
{
    const ascend_ema_adam::EmaAdamHyperParams& h = r.data.hyper;
    py::dict d;
    d["tiling_key"] = r.tilingKey;
    d["block_dim"] = r.blockDim;
    d["workspace_size"] = r.workspaceSize;
    d["ub_bytes_per_core"] = r.ubBytesPerCore;
    d["lr"] = h.lr;
    d["ema_decay"] = h.emaDecay;
    d["beta1"] = h.beta1;
    d["beta2"] = h.beta2;
    d["eps"] = h.eps;
    d["weight_decay"] = h.weightDecay;
    d["mode"] = h.mode;
    d["bias_correction"] = h.biasCorrection;
    return d;
}

inline py::dict CountersToDict(const twin::BlockCounters& c)
{
    py::dict d;
    d["gm_read_bytes"] = c.gmReadBytes;
    d["gm_write_bytes"] = c.gmWriteBytes;
    d["gm_scalar_read_bytes"] = c.gmScalarReadBytes;
    d["gm_scalar_write_bytes"] = c.gmScalarWriteBytes;
    d["dma_calls"] = c.dmaCalls;
    d["vector_calls"] = c.vectorCalls;
    d["vector_elements"] = c.vectorElements;
    d["ub_bytes_used"] = c.ubBytesUsed;
    return d;
}

/** A writable (or, for inputs, readable) contiguous buffer of exactly `bytes` bytes. */
inline void* BufferPtr(const py::buffer& obj, const char* name, size_t bytes, bool writable)
{
    py::buffer_info info = obj.request(writable);
    const size_t have = static_cast<size_t>(info.size) * static_cast<size_t>(info.itemsize);
    if (have != bytes) {
        throw py::value_error(std::string(name) + ": expected " + std::to_string(bytes) +
                              " bytes, got " + std::to_string(have));
    }
    return info.ptr;
}

/** A native launch's options from the bindings' arguments (`isa` must outlive them). */
inline aea::NativeOptions NativeOptionsOf(uint32_t threads, const std::string& isa,
                                   uint64_t minElemsPerThread, uint64_t streamingBytes)
{
    aea::NativeOptions options;
    options.threads = threads;
    options.minElemsPerThread = minElemsPerThread;
    options.isa = isa.c_str();
    options.streamingBytes = streamingBytes;
    return options;
}

/** The dict of a kernel launch on the twin: its tiling and per-block counters. */
template <class TilingDict>
py::dict TwinLaunchToDict(TilingDict&& tiling, const twin::LaunchResult& result)
{
    py::dict out;
    out["tiling"] = std::forward<TilingDict>(tiling);
    py::list blocks;
    for (const twin::BlockCounters& c : result.blocks) {
        blocks.append(CountersToDict(c));
    }
    out["blocks"] = blocks;
    return out;
}

}  // namespace ascend_ema_adam::kernels_bindings

/** An operator's bindings: AEA_KERNELS_BINDINGS(apply_fused_ema_adam) { mod.def(...); } */
#define AEA_KERNELS_BINDINGS(op)                                                                  \
    static void BindTwin_##op(::pybind11::module_& mod);                                      \
    static const ::ascend_ema_adam::module_registry::Registration kTwinRegistration_##op(       \
        #op, &BindTwin_##op);                                                                  \
    static void BindTwin_##op(::pybind11::module_& mod)

#endif  // ASCEND_EMA_ADAM_KERNELS_BINDINGS_H
