/**
 * @file twin_module.cpp
 * @brief ascend_ema_adam._twin: host tiling, the AscendC kernel on the CPU twin and the native CPU
 *        kernel, for numpy buffers. Verification and benchmark interface; users call the torch op.
 */
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "apply_fused_ema_adam_list_native.h"
#include "apply_fused_ema_adam_native.h"
#include "apply_fused_ema_adam_list_check.h"
#include "apply_fused_ema_adam_list_opdef.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "apply_fused_ema_adam_list_twin_run.h"
#include "apply_fused_ema_adam_tiling.h"
#include "apply_fused_ema_adam_twin_run.h"
#include "cpu_kernel.h"
#include "native_stream_probe.h"

namespace py = pybind11;
namespace aea = ascend_ema_adam;

namespace {

/** A float dtype of the C++ table by name ("float32"). */
aea::DataType ParseDtype(const std::string& name)
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

py::dict TilingToDict(const aea::TilingResult& r)
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
        const aea::ElementRange range = aea::CoreRange(t, core);
        ranges.append(py::make_tuple(range.begin, range.end));
    }
    d["core_ranges"] = ranges;
    return d;
}

py::dict CountersToDict(const twin::BlockCounters& c)
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
void* BufferPtr(const py::buffer& obj, const char* name, size_t bytes, bool writable)
{
    py::buffer_info info = obj.request(writable);
    const size_t have = static_cast<size_t>(info.size) * static_cast<size_t>(info.itemsize);
    if (have != bytes) {
        throw py::value_error(std::string(name) + ": expected " + std::to_string(bytes) +
                              " bytes, got " + std::to_string(have));
    }
    return info.ptr;
}

py::dict Launch(const py::buffer& grad, const py::buffer& var, const py::buffer& m,
                const py::buffer& v, const py::buffer& s, const py::buffer& step,
                uint64_t numel, const std::string& dtype, const aea::Attrs& attrs,
                const std::string& platformName, uint32_t threads)
{
    const aea::DataType dt = ParseDtype(dtype);
    const aea::Platform platform = aea::FindPlatform(platformName);
    const aea::TilingResult tiling = aea::ComputeTiling(numel, dt, attrs, platform);
    const size_t bytes = numel * aea::DataTypeSize(dt);
    aea::ApplyFusedEmaAdamBuffers b{};
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
        result = aea::RunOnTwin(tiling, platform, b, threads);
    }
    py::dict out;
    out["tiling"] = TilingToDict(tiling);
    py::list blocks;
    for (const twin::BlockCounters& c : result.blocks) {
        blocks.append(CountersToDict(c));
    }
    out["blocks"] = blocks;
    return out;
}

// ---- ApplyFusedEmaAdamList ---------------------------------------------------------------------

/** A list launch's dtypes by name; copy "" for none. */
aea::ListDtypes ParseListDtypes(const std::string& param, const std::string& state,
                                const std::string& grad, const std::string& copy)
{
    aea::ListDtypes d;
    d.param = ParseDtype(param);
    d.state = ParseDtype(state);
    d.grad = ParseDtype(grad);
    d.hasCopy = !copy.empty();
    if (d.hasCopy) {
        d.copy = ParseDtype(copy);
    }
    return d;
}

py::dict ListDtypesToDict(const aea::ListDtypes& d)
{
    py::dict out;
    out["param"] = aea::DataTypeName(d.param);
    out["state"] = aea::DataTypeName(d.state);
    out["grad"] = aea::DataTypeName(d.grad);
    out["copy"] = d.hasCopy ? py::object(py::str(aea::DataTypeName(d.copy))) : py::object(py::none());
    return out;
}

/** The list tiling; with the tensors' element counts also every core's segments
 *  [(tensor, begin, end), ...] in the kernel's walk order. */
py::dict ListTilingToDict(const aea::ListTilingResult& r, const std::vector<uint64_t>& numels)
{
    const ApplyFusedEmaAdamListTilingData& t = r.data;
    py::dict d = LaunchToDict(r);
    d["dtypes"] = ListDtypesToDict(r.dtypes);
    d["maximize"] = t.maximize;
    d["amsgrad"] = t.amsgrad;
    d["has_grad_scale"] = t.hasGradScale;
    d["has_found_inf"] = t.hasFoundInf;
    d["tensor_num"] = t.tensorNum;
    d["used_core_num"] = t.usedCoreNum;
    d["align_elems"] = t.alignElems;
    d["chunk_length"] = t.chunkLength;
    d["buffer_num"] = t.bufferNum;
    d["has_ema"] = t.hasEma;
    d["has_lr_tensor"] = t.hasLrTensor;
    d["has_ema_decay_tensor"] = t.hasEmaDecayTensor;
    py::list starts;
    for (uint32_t core = 0; core <= t.usedCoreNum; ++core) {
        starts.append(py::make_tuple(t.coreStart[core].tensor, t.coreStart[core].block));
    }
    d["core_starts"] = starts;
    py::list segments;
    for (uint32_t core = 0; core < t.usedCoreNum; ++core) {
        py::list mine;
        for (const aea::ListSegment& seg : aea::ListCoreSegments(t, numels, core)) {
            mine.append(py::make_tuple(seg.tensor, seg.begin, seg.end));
        }
        segments.append(mine);
    }
    d["core_segments"] = segments;
    return d;
}

aea::ListOptions MakeListOptions(bool maximize, bool amsgrad, bool gradScale, bool foundInf,
                                 bool ema = true, bool lrTensor = false,
                                 bool emaDecayTensor = false)
{
    aea::ListOptions o;
    o.maximize = maximize;
    o.amsgrad = amsgrad;
    o.gradScale = gradScale;
    o.foundInf = foundInf;
    o.ema = ema;
    o.lrTensor = lrTensor;
    o.emaDecayTensor = emaDecayTensor;
    return o;
}

/** Entry pointers of one list of numpy buffers, entry i holding numels[i] elements of `elemBytes`. */
std::vector<void*> ListPointers(const std::vector<py::buffer>& list, const char* name,
                                const std::vector<uint64_t>& numels, uint32_t elemBytes,
                                bool writable)
{
    if (list.size() != numels.size()) {
        throw py::value_error(std::string(name) + " has " + std::to_string(list.size()) +
                              " entries, grads has " + std::to_string(numels.size()));
    }
    std::vector<void*> ptrs;
    for (size_t i = 0; i < list.size(); ++i) {
        const std::string entry = std::string(name) + "[" + std::to_string(i) + "]";
        ptrs.push_back(BufferPtr(list[i], entry.c_str(), numels[i] * elemBytes, writable));
    }
    return ptrs;
}

using BufferList = std::vector<py::buffer>;

/** One list launch from Python buffers: dtypes, options and the launch's memory (the pointer
 *  arrays live here; `buffers` points into them, so a ListLaunch is never copied). */
struct ListLaunch {
    aea::ListDtypes dtypes;
    aea::ListOptions options;
    std::vector<void*> grads, vars, ms, vs, ss, maxVs, copies;
    aea::ApplyFusedEmaAdamListBuffers buffers;

    ListLaunch(const BufferList& g, const BufferList& p, const BufferList& m, const BufferList& v,
               const std::optional<BufferList>& s, const std::optional<BufferList>& maxV,
               const std::optional<BufferList>& copy, const std::vector<uint64_t>& numels,
               const py::buffer& step, const std::optional<py::buffer>& gradScale,
               const std::optional<py::buffer>& foundInf, const std::string& param,
               const std::string& state, const std::string& grad, const std::string& copyDtype,
               bool maximize, const std::optional<py::buffer>& lr,
               const std::optional<py::buffer>& emaDecay)
        : dtypes(ParseListDtypes(param, state, grad, copyDtype)),
          options(MakeListOptions(maximize, maxV.has_value(), gradScale.has_value(),
                                  foundInf.has_value(), s.has_value(), lr.has_value(),
                                  emaDecay.has_value()))
    {
        if (dtypes.hasCopy != copy.has_value()) {
            throw py::value_error("copy dtype and model copies must be given together");
        }
        const uint32_t pBytes = aea::DataTypeSize(dtypes.param);
        const uint32_t sBytes = aea::DataTypeSize(dtypes.state);
        grads = ListPointers(g, "grads", numels, aea::DataTypeSize(dtypes.grad), false);
        vars = ListPointers(p, "vars", numels, pBytes, true);
        ms = ListPointers(m, "ms", numels, sBytes, true);
        vs = ListPointers(v, "vs", numels, sBytes, true);
        buffers.tensorNum = static_cast<uint32_t>(numels.size());
        buffers.numels = numels.data();
        buffers.grads = grads.data();
        buffers.vars = vars.data();
        buffers.ms = ms.data();
        buffers.vs = vs.data();
        if (s) {
            ss = ListPointers(*s, "ss", numels, sBytes, true);
            buffers.ss = ss.data();
        }
        if (maxV) {
            maxVs = ListPointers(*maxV, "max_vs", numels, sBytes, true);
            buffers.maxVs = maxVs.data();
        }
        if (copy) {
            copies = ListPointers(*copy, "model_copies", numels,
                                  aea::DataTypeSize(dtypes.copy), true);
            buffers.copies = copies.data();
        }
        buffers.step = static_cast<const int64_t*>(BufferPtr(step, "step", sizeof(int64_t), false));
        if (gradScale) {
            buffers.gradScale = static_cast<const float*>(
                BufferPtr(*gradScale, "grad_scale", sizeof(float), false));
        }
        if (foundInf) {
            buffers.foundInf = static_cast<const float*>(
                BufferPtr(*foundInf, "found_inf", sizeof(float), false));
        }
        if (lr) {
            buffers.lr = static_cast<const float*>(BufferPtr(*lr, "lr", sizeof(float), false));
        }
        if (emaDecay) {
            buffers.emaDecay = static_cast<const float*>(
                BufferPtr(*emaDecay, "ema_decay", sizeof(float), false));
        }
    }
    ListLaunch(const ListLaunch&) = delete;
    ListLaunch& operator=(const ListLaunch&) = delete;
};

py::dict LaunchList(const std::vector<py::buffer>& grads, const std::vector<py::buffer>& vars,
                    const std::vector<py::buffer>& ms, const std::vector<py::buffer>& vs,
                    const std::optional<std::vector<py::buffer>>& ss, const py::buffer& step,
                    const std::vector<uint64_t>& numels, const std::string& param,
                    const std::string& state, const std::string& grad, const std::string& copy,
                    const aea::Attrs& attrs, bool maximize,
                    const std::optional<std::vector<py::buffer>>& maxVs,
                    const std::optional<std::vector<py::buffer>>& copies,
                    const std::optional<py::buffer>& gradScale,
                    const std::optional<py::buffer>& foundInf, const std::string& platformName,
                    uint32_t threads, const std::optional<py::buffer>& lr,
                    const std::optional<py::buffer>& emaDecay)
{
    const ListLaunch launch(grads, vars, ms, vs, ss, maxVs, copies, numels, step, gradScale,
                            foundInf, param, state, grad, copy, maximize, lr, emaDecay);
    const aea::Platform platform = aea::FindPlatform(platformName);
    aea::ListTilingResult tiling;
    try {
        tiling = aea::ComputeListTiling(numels, launch.dtypes, attrs, launch.options, platform);
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    const aea::ApplyFusedEmaAdamListBuffers& b = launch.buffers;

    twin::LaunchResult result;
    {
        py::gil_scoped_release release;
        result = aea::RunListOnTwin(tiling, platform, b, threads);
    }
    py::dict out;
    out["tiling"] = ListTilingToDict(tiling, numels);
    py::list blocks;
    for (const twin::BlockCounters& c : result.blocks) {
        blocks.append(CountersToDict(c));
    }
    out["blocks"] = blocks;
    return out;
}

aea::StreamProbe ParseProbe(const std::string& kind)
{
    if (kind == "copy") return aea::StreamProbe::kCopy;
    if (kind == "copy_nt") return aea::StreamProbe::kCopyNt;
    if (kind == "triad") return aea::StreamProbe::kTriad;
    if (kind == "triad_nt") return aea::StreamProbe::kTriadNt;
    if (kind == "update") return aea::StreamProbe::kUpdate;
    throw py::value_error("kind must be copy, copy_nt, triad, triad_nt or update, got '" + kind +
                          "'");
}

/** A native launch's options from the bindings' arguments (`isa` must outlive them). */
aea::NativeOptions NativeOptionsOf(uint32_t threads, const std::string& isa,
                                   uint64_t minElemsPerThread, uint64_t streamingBytes)
{
    aea::NativeOptions options;
    options.threads = threads;
    options.minElemsPerThread = minElemsPerThread;
    options.isa = isa.c_str();
    options.streamingBytes = streamingBytes;
    return options;
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
    const aea::TilingResult tiling = aea::ComputeTiling(numel, dt, attrs, aea::CpuPlatform());
    const size_t bytes = numel * aea::DataTypeSize(dt);
    aea::ApplyFusedEmaAdamBuffers b{};
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

    const aea::NativeOptions options = NativeOptionsOf(threads, isa, minElemsPerThread, streamingBytes);
    uint32_t used = 0;
    try {
        py::gil_scoped_release release;
        used = aea::RunNative(tiling, b, options);
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    py::dict out;
    out["tiling"] = TilingToDict(tiling);
    out["isa"] = isa.empty() ? std::string(aea::NativeIsa()) : isa;
    out["threads"] = used;
    return out;
}

/** The native list kernel on lists of contiguous buffers, updated in place. */
py::dict LaunchNativeList(const std::vector<py::buffer>& grads, const std::vector<py::buffer>& vars,
                          const std::vector<py::buffer>& ms, const std::vector<py::buffer>& vs,
                          const std::optional<std::vector<py::buffer>>& ss,
                          const std::optional<std::vector<py::buffer>>& maxVs,
                          const std::optional<std::vector<py::buffer>>& copies,
                          const std::vector<uint64_t>& numels, const py::buffer& step,
                          const std::optional<py::buffer>& gradScale,
                          const std::optional<py::buffer>& foundInf, const std::string& param,
                          const std::string& state, const std::string& grad,
                          const std::string& copy, const aea::Attrs& attrs, bool maximize,
                          uint32_t threads, const std::string& isa, uint64_t minElemsPerThread,
                          uint64_t streamingBytes, const std::optional<py::buffer>& lr,
                          const std::optional<py::buffer>& emaDecay)
{
    const ListLaunch launch(grads, vars, ms, vs, ss, maxVs, copies, numels, step, gradScale,
                            foundInf, param, state, grad, copy, maximize, lr, emaDecay);
    const aea::NativeOptions options = NativeOptionsOf(threads, isa, minElemsPerThread, streamingBytes);
    uint32_t used = 0;
    try {
        const aea::ListTilingResult tiling = aea::ComputeListTiling(
            numels, launch.dtypes, attrs, launch.options, aea::CpuPlatform());
        py::gil_scoped_release release;
        used = aea::RunNativeList(tiling, launch.buffers, options);
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    py::dict out;
    out["isa"] = isa.empty() ? std::string(aea::NativeIsa()) : isa;
    out["threads"] = used;
    return out;
}

}  // namespace

PYBIND11_MODULE(_twin, mod)
{
    mod.doc() = "ApplyFusedEmaAdam host tiling and the AscendC kernel on the CPU twin";

    mod.def("platforms", [] {
        py::list out;
        for (const aea::Platform& p : aea::PlatformPresets()) {
            py::dict d;
            d["name"] = p.name;
            d["vector_core_num"] = p.vectorCoreNum;
            d["ub_size"] = p.ubSize;
            d["hbm_gbps"] = p.hbmGBps;
            out.append(d);
        }
        return out;
    }, "Platform presets (name, vector cores, UB bytes per core, nominal HBM GB/s).");

    py::class_<aea::Attrs>(mod, "Attrs",
                           "The operator's attributes, set by name (CANN's defaults).")
        .def(py::init<>())
        .def_readwrite("lr", &aea::Attrs::lr)
        .def_readwrite("ema_decay", &aea::Attrs::emaDecay)
        .def_readwrite("beta1", &aea::Attrs::beta1)
        .def_readwrite("beta2", &aea::Attrs::beta2)
        .def_readwrite("eps", &aea::Attrs::eps)
        .def_readwrite("mode", &aea::Attrs::mode)
        .def_readwrite("bias_correction", &aea::Attrs::biasCorrection)
        .def_readwrite("weight_decay", &aea::Attrs::weightDecay);

    mod.def("data_types", [] {
        py::list out;
        for (const aea::DataTypeInfo& info : aea::kDataTypes) {
            py::dict d;
            d["name"] = info.name;
            d["size"] = info.size;
            d["cann_code"] = info.cannCode;
            d["is_float"] = info.isFloat;
            out.append(d);
        }
        return out;
    }, "The C++ dtype table (op_host/data_type.h): name, size, CANN code, float or not.");

    mod.def("compute_tiling",
            [](uint64_t numel, const std::string& dtype, const std::string& platform,
               const aea::Attrs& attrs, uint32_t vectorCoreNum, uint32_t ubSize) {
                aea::Platform p = aea::FindPlatform(platform);
                if (vectorCoreNum != 0) p.vectorCoreNum = vectorCoreNum;
                if (ubSize != 0) p.ubSize = ubSize;
                try {
                    return TilingToDict(aea::ComputeTiling(numel, ParseDtype(dtype), attrs, p));
                } catch (const std::invalid_argument& e) {
                    throw py::value_error(e.what());
                }
            },
            py::arg("numel"), py::arg("dtype"), py::arg("platform") = "cpu",
            py::arg("attrs") = aea::Attrs(), py::arg("vector_core_num") = 0,
            py::arg("ub_size") = 0,
            "Host tiling for numel elements (platform preset, optionally overriding its core "
            "count or UB size).");

    mod.def("list_dtype_combinations", [] {
        py::list out;
        for (const aea::ListDtypes& d : aea::ListDtypeCombinations()) {
            py::dict entry = ListDtypesToDict(d);
            entry["tiling_key"] = aea::ListTilingKeyOf(d);
            out.append(entry);
        }
        return out;
    }, "ApplyFusedEmaAdamList's dtype combinations (param, state, grad, copy or None) with their "
       "tiling keys, in key order.");

    mod.def("list_dtype_contract", [] {
        // Every (param, state, grad, copy or none) of the dtype table, one tensor per list,
        // through the list op's real check: the rows it accepts are the contract.
        const std::vector<int64_t> shape{1};
        const aea::TensorArg step{aea::kListStepName, aea::CannCodeOf(aea::DataType::kInt64),
                                  shape};
        const auto one = [&](const aea::DataTypeInfo& t) {
            return std::vector<aea::ListEntryArg>{{t.cannCode, &shape}};
        };
        py::list out;
        for (const aea::DataTypeInfo& p : aea::kDataTypes) {
            for (const aea::DataTypeInfo& s : aea::kDataTypes) {
                for (const aea::DataTypeInfo& g : aea::kDataTypes) {
                    for (int c = -1; c < static_cast<int>(aea::kDataTypeCount); ++c) {
                        const std::vector<aea::ListEntryArg> vars = one(p), state = one(s),
                                                             grads = one(g),
                            copies = c < 0 ? std::vector<aea::ListEntryArg>{}
                                           : one(aea::kDataTypes[c]);
                        aea::ApplyFusedEmaAdamListArgs args;
                        args.lists[aea::kListGrads] = &grads;
                        args.lists[aea::kListVars] = &vars;
                        args.lists[aea::kListMs] = args.lists[aea::kListVs] =
                            args.lists[aea::kListSs] = &state;
                        args.lists[aea::kListCopies] = &copies;
                        args.step = &step;
                        aea::ListDtypes dtypes{};
                        aea::ListOptions options;
                        if (aea::CheckApplyFusedEmaAdamList(args, aea::Attrs(), false, &dtypes,
                                                            &options).empty()) {
                            out.append(py::make_tuple(
                                p.name, s.name, g.name,
                                c < 0 ? py::object(py::none())
                                      : py::object(py::str(aea::kDataTypes[c].name))));
                        }
                    }
                }
            }
        }
        return out;
    }, "The list op's dtype contract as CheckApplyFusedEmaAdamList decides it: the accepted "
       "(param, state, grad, copy or None) over the dtype table.");

    mod.def("list_opdef_columns", [](bool emaOptional) {
        py::list out;
        for (const aea::ListOpDefColumn& c : aea::ListOpDefColumns(emaOptional)) {
            py::list inputs, outputs;
            for (aea::DataType d : c.inputs) inputs.append(aea::DataTypeName(d));
            for (aea::DataType d : c.outputs) outputs.append(aea::DataTypeName(d));
            out.append(py::make_tuple(py::tuple(inputs), py::tuple(outputs)));
        }
        return out;
    }, py::arg("ema_optional"),
       "The list OpDefs' dtype columns (op_host/apply_fused_ema_adam_list_opdef.h): per column the "
       "dtypes of the lists as inputs (grads ... model_copies) and as outputs (vars ... "
       "model_copies); ema_optional: V2's (ss may be empty).");

    mod.def("list_ub_bytes_per_element",
            [](const std::string& param, const std::string& state, const std::string& grad,
               const std::string& copy, bool amsgrad, bool gradScale, uint32_t bufferNum,
               bool ema) {
                return aea::ListUbBytesPerElement(
                    ParseListDtypes(param, state, grad, copy),
                    MakeListOptions(false, amsgrad, gradScale, false, ema), bufferNum);
            },
            py::arg("param"), py::arg("state"), py::arg("grad"), py::arg("copy") = "",
            py::arg("amsgrad") = false, py::arg("grad_scale") = false, py::arg("buffer_num") = 2,
            py::arg("ema") = true,
            "UB bytes per chunk element of the list kernel (the tiling's one formula).");

    mod.def("compute_list_tiling",
            [](const std::vector<uint64_t>& numels, const std::string& param,
               const std::string& state, const std::string& grad, const std::string& copy,
               const aea::Attrs& attrs, bool maximize, bool amsgrad, bool gradScale,
               bool foundInf, const std::string& platform, uint32_t vectorCoreNum,
               uint32_t ubSize, bool ema, bool lrTensor, bool emaDecayTensor) {
                aea::Platform p = aea::FindPlatform(platform);
                if (vectorCoreNum != 0) p.vectorCoreNum = vectorCoreNum;
                if (ubSize != 0) p.ubSize = ubSize;
                try {
                    return ListTilingToDict(
                        aea::ComputeListTiling(numels, ParseListDtypes(param, state, grad, copy),
                                               attrs,
                                               MakeListOptions(maximize, amsgrad, gradScale,
                                                               foundInf, ema, lrTensor,
                                                               emaDecayTensor),
                                               p),
                        numels);
                } catch (const std::invalid_argument& e) {
                    throw py::value_error(e.what());
                }
            },
            py::arg("numels"), py::arg("param"), py::arg("state"), py::arg("grad"),
            py::arg("copy") = "", py::arg("attrs") = aea::Attrs(), py::arg("maximize") = false,
            py::arg("amsgrad") = false, py::arg("grad_scale") = false,
            py::arg("found_inf") = false, py::arg("platform") = "cpu",
            py::arg("vector_core_num") = 0, py::arg("ub_size") = 0, py::arg("ema") = true,
            py::arg("lr_tensor") = false, py::arg("ema_decay_tensor") = false,
            "ApplyFusedEmaAdamList host tiling for tensors of numels elements (platform preset, "
            "optionally overriding its core count or UB size); includes every core's segments.");

    mod.def("launch_list", &LaunchList, py::arg("grads"), py::arg("vars"), py::arg("ms"),
            py::arg("vs"), py::arg("ss"), py::arg("step"), py::arg("numels"), py::arg("param"),
            py::arg("state"), py::arg("grad"), py::arg("copy"), py::arg("attrs"),
            py::arg("maximize") = false, py::arg("max_vs") = py::none(),
            py::arg("copies") = py::none(), py::arg("grad_scale") = py::none(),
            py::arg("found_inf") = py::none(), py::arg("platform") = "cpu",
            py::arg("threads") = 0, py::arg("lr") = py::none(), py::arg("ema_decay") = py::none(),
            "Run the list kernel in place on lists of contiguous buffers through the twin (ss "
            "None: no EMA; lr, ema_decay: one-element fp32 buffers replacing the attributes); "
            "returns the tiling and per-block counters.");

    mod.def("launch", &Launch, py::arg("grad"), py::arg("var"), py::arg("m"), py::arg("v"),
            py::arg("s"), py::arg("step"), py::arg("numel"), py::arg("dtype"), py::arg("attrs"),
            py::arg("platform") = "cpu", py::arg("threads") = 0,
            "Run the kernel in place on contiguous buffers through the twin; returns the tiling "
            "and per-block counters.");

    mod.def("launch_native", &LaunchNative, py::arg("grad"), py::arg("var"), py::arg("m"),
            py::arg("v"), py::arg("s"), py::arg("step"), py::arg("numel"), py::arg("dtype"),
            py::arg("attrs"), py::arg("threads") = 0, py::arg("isa") = "",
            py::arg("min_elems_per_thread") = aea::kNativeMinElemsPerThread,
            py::arg("streaming_bytes") = aea::kNativeStreamingBytes,
            py::arg("var_out") = py::none(), py::arg("m_out") = py::none(),
            py::arg("v_out") = py::none(), py::arg("s_out") = py::none(),
            "Run the native CPU kernel on contiguous buffers, in place unless *_out are given; "
            "returns the tiling, the instruction set and the threads used.");

    mod.def("launch_native_list", &LaunchNativeList, py::arg("grads"), py::arg("vars"),
            py::arg("ms"), py::arg("vs"), py::arg("ss"), py::arg("max_vs"),
            py::arg("model_copies"), py::arg("numels"), py::arg("step"), py::arg("grad_scale"),
            py::arg("found_inf"), py::arg("param"), py::arg("state"), py::arg("grad"),
            py::arg("copy"), py::arg("attrs"), py::arg("maximize"), py::arg("threads") = 0,
            py::arg("isa") = "", py::arg("min_elems_per_thread") = aea::kNativeMinElemsPerThread,
            py::arg("streaming_bytes") = aea::kNativeStreamingBytes, py::arg("lr") = py::none(),
            py::arg("ema_decay") = py::none(),
            "Run the native list kernel (ApplyFusedEmaAdamList) in place on lists of contiguous "
            "buffers (ss, max_vs, model_copies, grad_scale, found_inf, lr, ema_decay: None when "
            "absent); returns the instruction set and the threads used (0: nothing ran).");

    mod.def("native_list_chunks",
            [](const std::vector<uint64_t>& numels, uint32_t threads) {
                py::list out;
                for (const aea::NativeListChunk& c : aea::NativeListChunks(
                         numels.data(), static_cast<uint32_t>(numels.size()), threads)) {
                    out.append(py::make_tuple(c.tensor, c.offset, c.count));
                }
                return out;
            },
            py::arg("numels"), py::arg("threads"),
            "The chunks (tensor, offset, count) the native list kernel hands out for these "
            "element counts on `threads` threads.");

    mod.def("native_pool_launches", [] { return aea::native::ThreadPool::Get().Launches(); },
            "Launches of the native kernels' thread pool so far (one per parallel kernel call).");

    mod.def("native_bias_correction", [](float beta, int64_t step) {
        return aea::BiasCorrection(beta, step);
    }, py::arg("beta"), py::arg("step"),
    "c = 1 - beta^step in fp32: the kernel's own BiasCorrection, compiled for the host.");

    mod.def("cpu_kernel", [] {
        py::dict d;
        try {
            d["kernel"] = aea::SelectedCpuKernel() == aea::CpuKernel::kTwin ? "twin" : "native";
            d["threads"] = aea::NativeThreads();
            d["isa"] = aea::NativeIsa();
        } catch (const std::invalid_argument& e) {
            throw py::value_error(e.what());
        }
        return d;
    }, "The CPU device's kernel as the environment selects it now: kernel ('native' or 'twin', "
       "from ASCEND_EMA_ADAM_CPU_KERNEL), the native kernel's instruction set and default threads "
       "(ASCEND_EMA_ADAM_NUM_THREADS, else every CPU of the process).");

    mod.def("cpu_kernel_name", [] {
        try {
            if (aea::SelectedCpuKernel() == aea::CpuKernel::kTwin) {
                return std::string("twin (the AscendC kernel on the CPU twin)");
            }
            return "native (" + std::string(aea::NativeIsa()) + ", " +
                   std::to_string(aea::NativeThreads()) + " threads)";
        } catch (const std::invalid_argument& e) {
            return std::string("none: ") + e.what();
        }
    }, "cpu_kernel() in one line, for `info` (an invalid environment is described, not raised).");

    mod.def("stream_probe",
            [](const std::string& kind, const std::vector<py::buffer>& arrays, float scalar,
               uint64_t n, uint32_t threads) {
                const aea::StreamProbe k = ParseProbe(kind);
                if (arrays.size() != static_cast<size_t>(aea::StreamProbeArrays(k))) {
                    throw py::value_error(kind + " needs " +
                                          std::to_string(aea::StreamProbeArrays(k)) + " arrays");
                }
                std::vector<float*> ptrs;
                for (size_t i = 0; i < arrays.size(); ++i) {
                    const std::string name = "arrays[" + std::to_string(i) + "]";
                    ptrs.push_back(static_cast<float*>(
                        BufferPtr(arrays[i], name.c_str(), n * sizeof(float), true)));
                }
                py::gil_scoped_release release;
                return aea::RunStreamProbe(k, ptrs.data(), scalar, n, threads);
            },
            py::arg("kind"), py::arg("arrays"), py::arg("scalar"), py::arg("n"),
            py::arg("threads") = 0,
            "Streaming-bandwidth probe on float32 buffers of n elements, split over threads like "
            "the native kernel: copy (a0 = a1; 8 B/elem), triad (a0 = a1 + scalar*a2; 12 B/elem), "
            "their _nt variants storing around the caches; update (ak += a0 for k = 1..4 in "
            "place: the kernel's 36 B/elem pattern). Returns the threads used.");
}
