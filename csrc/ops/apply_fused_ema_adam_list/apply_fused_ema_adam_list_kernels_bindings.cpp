/**
 * @file apply_fused_ema_adam_list_kernels_bindings.cpp
 * @brief ApplyFusedEmaAdamList's _kernels bindings: its dtype contract and OpDef columns, its
 *        tiling, the list kernel on the twin and the native list kernel on lists of numpy buffers.
 */
#include <optional>
#include <vector>

#include "apply_fused_ema_adam_list_native.h"
#include "apply_fused_ema_adam_list_check.h"
#include "apply_fused_ema_adam_list_opdef.h"
#include "apply_fused_ema_adam_list_signature.h"
#include "apply_fused_ema_adam_list_tiling.h"
#include "apply_fused_ema_adam_list_twin_run.h"
#include "ema_adam_entries.h"
#include "kernels_bindings.h"

namespace {

using namespace ascend_ema_adam::kernels_bindings;
namespace list_op = ascend_ema_adam::apply_fused_ema_adam_list;

/** A list launch's dtypes by name; copy "" for none. */
list_op::ApplyFusedEmaAdamListDtypes ParseApplyFusedEmaAdamListDtypes(const std::string& param,
                                                                      const std::string& state,
                                                                      const std::string& grad,
                                                                      const std::string& copy)
{
    list_op::ApplyFusedEmaAdamListDtypes d;
    d.param = ParseDtype(param);
    d.state = ParseDtype(state);
    d.grad = ParseDtype(grad);
    d.hasCopy = !copy.empty();
    if (d.hasCopy) {
        d.copy = ParseDtype(copy);
    }
    return d;
}

py::dict ApplyFusedEmaAdamListDtypesToDict(const list_op::ApplyFusedEmaAdamListDtypes& d)
{
    py::dict out;
    out["param"] = aea::DataTypeName(d.param);
    out["state"] = aea::DataTypeName(d.state);
    out["grad"] = aea::DataTypeName(d.grad);
    out["copy"] =
        d.hasCopy ? py::object(py::str(aea::DataTypeName(d.copy))) : py::object(py::none());
    return out;
}

/** The list tiling (the attributes are the hyper-parameters' fields and the
 *  ApplyFusedEmaAdamListAttrs the caller gave; the flags say which optional inputs the launch has);
 *  with the tensors' element counts also every core's segments [(tensor, begin, end), ...] in the
 *  kernel's walk order. */
py::dict ApplyFusedEmaAdamListTilingToDict(const list_op::ApplyFusedEmaAdamListTilingResult& r,
                                           const std::vector<uint64_t>& numels)
{
    const ApplyFusedEmaAdamListTilingData& t = r.data;
    py::dict d = LaunchToDict(r);
    d["dtypes"] = ApplyFusedEmaAdamListDtypesToDict(r.dtypes);
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
        for (const list_op::ApplyFusedEmaAdamListSegment& seg :
             list_op::ApplyFusedEmaAdamListCoreSegments(t, numels, core)) {
            mine.append(py::make_tuple(seg.tensor, seg.begin, seg.end));
        }
        segments.append(mine);
    }
    d["core_segments"] = segments;
    return d;
}

list_op::ApplyFusedEmaAdamListOptions MakeApplyFusedEmaAdamListOptions(bool amsgrad, bool gradScale,
                                                                       bool foundInf,
                                                                       bool ema = true,
                                                                       bool lrTensor = false,
                                                                       bool emaDecayTensor = false)
{
    list_op::ApplyFusedEmaAdamListOptions o;
    o.amsgrad = amsgrad;
    o.gradScale = gradScale;
    o.foundInf = foundInf;
    o.ema = ema;
    o.lrTensor = lrTensor;
    o.emaDecayTensor = emaDecayTensor;
    return o;
}

/** Entry pointers of one list of numpy buffers, entry i holding numels[i] elements of `elemBytes`.
 */
std::vector<void*> ApplyFusedEmaAdamListPointers(const std::vector<py::buffer>& list,
                                                 const char* name,
                                                 const std::vector<uint64_t>& numels,
                                                 uint32_t elemBytes, bool writable)
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

/** One list launch from Python buffers: dtypes, optional inputs and the launch's memory (the
 *  pointer arrays live here; `buffers` points into them, so a ApplyFusedEmaAdamListLaunch is never
 *  copied). */
struct ApplyFusedEmaAdamListLaunch {
    list_op::ApplyFusedEmaAdamListDtypes dtypes;
    list_op::ApplyFusedEmaAdamListOptions options;
    std::vector<void*> grads, vars, ms, vs, ss, maxVs, copies;
    list_op::ApplyFusedEmaAdamListBuffers buffers;

    ApplyFusedEmaAdamListLaunch(const BufferList& g, const BufferList& p, const BufferList& m,
                                const BufferList& v, const std::optional<BufferList>& s,
                                const std::optional<BufferList>& maxV,
                                const std::optional<BufferList>& copy,
                                const std::vector<uint64_t>& numels, const py::buffer& step,
                                const std::optional<py::buffer>& gradScale,
                                const std::optional<py::buffer>& foundInf, const std::string& param,
                                const std::string& state, const std::string& grad,
                                const std::string& copyDtype, const std::optional<py::buffer>& lr,
                                const std::optional<py::buffer>& emaDecay)
        : dtypes(ParseApplyFusedEmaAdamListDtypes(param, state, grad, copyDtype)),
          options(MakeApplyFusedEmaAdamListOptions(maxV.has_value(), gradScale.has_value(),
                                                   foundInf.has_value(), s.has_value(),
                                                   lr.has_value(), emaDecay.has_value()))
    {
        if (dtypes.hasCopy != copy.has_value()) {
            throw py::value_error("copy dtype and model copies must be given together");
        }
        const uint32_t pBytes = aea::DataTypeSize(dtypes.param);
        const uint32_t sBytes = aea::DataTypeSize(dtypes.state);
        grads = ApplyFusedEmaAdamListPointers(g, "grads", numels, aea::DataTypeSize(dtypes.grad),
                                              false);
        vars = ApplyFusedEmaAdamListPointers(p, "vars", numels, pBytes, true);
        ms = ApplyFusedEmaAdamListPointers(m, "ms", numels, sBytes, true);
        vs = ApplyFusedEmaAdamListPointers(v, "vs", numels, sBytes, true);
        buffers.tensorNum = static_cast<uint32_t>(numels.size());
        buffers.numels = numels.data();
        buffers.grads = grads.data();
        buffers.vars = vars.data();
        buffers.ms = ms.data();
        buffers.vs = vs.data();
        if (s) {
            ss = ApplyFusedEmaAdamListPointers(*s, "ss", numels, sBytes, true);
            buffers.ss = ss.data();
        }
        if (maxV) {
            maxVs = ApplyFusedEmaAdamListPointers(*maxV, "max_vs", numels, sBytes, true);
            buffers.maxVs = maxVs.data();
        }
        if (copy) {
            copies = ApplyFusedEmaAdamListPointers(*copy, "model_copies", numels,
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
    ApplyFusedEmaAdamListLaunch(const ApplyFusedEmaAdamListLaunch&) = delete;
    ApplyFusedEmaAdamListLaunch& operator=(const ApplyFusedEmaAdamListLaunch&) = delete;
};

py::dict LaunchApplyFusedEmaAdamList(
    const std::vector<py::buffer>& grads, const std::vector<py::buffer>& vars,
    const std::vector<py::buffer>& ms, const std::vector<py::buffer>& vs,
    const std::optional<std::vector<py::buffer>>& ss, const py::buffer& step,
    const std::vector<uint64_t>& numels, const std::string& param, const std::string& state,
    const std::string& grad, const std::string& copy,
    const list_op::ApplyFusedEmaAdamListAttrs& attrs,
    const std::optional<std::vector<py::buffer>>& maxVs,
    const std::optional<std::vector<py::buffer>>& copies,
    const std::optional<py::buffer>& gradScale, const std::optional<py::buffer>& foundInf,
    const std::string& platformName, uint32_t threads, const std::optional<py::buffer>& lr,
    const std::optional<py::buffer>& emaDecay, const std::string& overflowMode)
{
    const twin::FloatOverflowMode overflow = ParseOverflowMode(overflowMode);
    const ApplyFusedEmaAdamListLaunch launch(grads, vars, ms, vs, ss, maxVs, copies, numels, step,
                                             gradScale, foundInf, param, state, grad, copy, lr,
                                             emaDecay);
    const aea::Platform platform = aea::FindPlatform(platformName);
    list_op::ApplyFusedEmaAdamListTilingResult tiling;
    try {
        tiling = list_op::ComputeApplyFusedEmaAdamListTiling(numels, launch.dtypes, attrs,
                                                             launch.options, platform);
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    const list_op::ApplyFusedEmaAdamListBuffers& b = launch.buffers;

    twin::LaunchResult result;
    {
        py::gil_scoped_release release;
        result = list_op::RunApplyFusedEmaAdamListOnTwin(tiling, platform, b, threads, overflow);
    }
    return TwinLaunchToDict(ApplyFusedEmaAdamListTilingToDict(tiling, numels), result);
}

/** The native list kernel on lists of contiguous buffers, updated in place. */
py::dict LaunchApplyFusedEmaAdamListNative(
    const std::vector<py::buffer>& grads, const std::vector<py::buffer>& vars,
    const std::vector<py::buffer>& ms, const std::vector<py::buffer>& vs,
    const std::optional<std::vector<py::buffer>>& ss,
    const std::optional<std::vector<py::buffer>>& maxVs,
    const std::optional<std::vector<py::buffer>>& copies, const std::vector<uint64_t>& numels,
    const py::buffer& step, const std::optional<py::buffer>& gradScale,
    const std::optional<py::buffer>& foundInf, const std::string& param, const std::string& state,
    const std::string& grad, const std::string& copy,
    const list_op::ApplyFusedEmaAdamListAttrs& attrs, uint32_t threads, const std::string& isa,
    uint64_t minElemsPerThread, uint64_t streamingBytes, const std::optional<py::buffer>& lr,
    const std::optional<py::buffer>& emaDecay)
{
    const ApplyFusedEmaAdamListLaunch launch(grads, vars, ms, vs, ss, maxVs, copies, numels, step,
                                             gradScale, foundInf, param, state, grad, copy, lr,
                                             emaDecay);
    const aea::NativeOptions options =
        NativeOptionsOf(threads, isa, minElemsPerThread, streamingBytes);
    uint32_t used = 0;
    try {
        const list_op::ApplyFusedEmaAdamListTilingResult tiling =
            list_op::ComputeApplyFusedEmaAdamListTiling(numels, launch.dtypes, attrs,
                                                        launch.options, aea::CpuPlatform());
        py::gil_scoped_release release;
        used = list_op::RunApplyFusedEmaAdamListNative(tiling, launch.buffers, options);
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
    py::dict out;
    out["isa"] = isa.empty() ? std::string(aea::NativeIsa()) : isa;
    out["threads"] = used;
    return out;
}

}  // namespace

AEA_KERNELS_BINDINGS(apply_fused_ema_adam_list)
{
#define AEA_LIST_ATTR_FIELD(type, cpp, name) \
    .def_readwrite(name, &list_op::ApplyFusedEmaAdamListAttrs::cpp)
    py::class_<list_op::ApplyFusedEmaAdamListAttrs>(
        mod, "ApplyFusedEmaAdamListAttrs",
        "ApplyFusedEmaAdamList's attributes, its spec's (defaults: "
        "CANN's), as the tiling takes them.")
        .def(py::init<>()) APPLY_FUSED_EMA_ADAM_LIST_ATTR_TABLE(AEA_LIST_ATTR_FIELD);
#undef AEA_LIST_ATTR_FIELD

    mod.def("list_dtype_combinations", [] {
        py::list out;
        for (const list_op::ApplyFusedEmaAdamListDtypes& d :
             list_op::ApplyFusedEmaAdamListDtypeCombinations()) {
            py::dict entry = ApplyFusedEmaAdamListDtypesToDict(d);
            entry["tiling_key"] = list_op::ApplyFusedEmaAdamListTilingKeyOf(d);
            out.append(entry);
        }
        return out;
    }, "ApplyFusedEmaAdamList's dtype combinations (param, state, grad, copy or None) with their "
       "tiling keys, in key order.");

    mod.def("list_dtype_contract", [] {
        // Every (param, state, grad, copy or none) of the dtype table, one tensor per list,
        // through the list op's real check: the rows it accepts are the contract.
        const std::vector<int64_t> shape{1};
        const aea::TensorArg step{list_op::kApplyFusedEmaAdamListStepName,
                                  aea::CannCodeOf(aea::DataType::kInt64), shape};
        const auto one = [&](const aea::DataTypeInfo& t) {
            return std::vector<list_op::ListEntryArg>{{t.cannCode, &shape}};
        };
        py::list out;
        for (const aea::DataTypeInfo& p : aea::kDataTypes) {
            for (const aea::DataTypeInfo& s : aea::kDataTypes) {
                for (const aea::DataTypeInfo& g : aea::kDataTypes) {
                    for (int c = -1; c < static_cast<int>(aea::kDataTypeCount); ++c) {
                        const std::vector<list_op::ListEntryArg> vars = one(p), state = one(s),
                                                             grads = one(g),
                            copies = c < 0 ? std::vector<list_op::ListEntryArg>{}
                                           : one(aea::kDataTypes[c]);
                        list_op::ApplyFusedEmaAdamListArgs args;
                        args.lists[list_op::kApplyFusedEmaAdamListGrads] = &grads;
                        args.lists[list_op::kApplyFusedEmaAdamListVars] = &vars;
                        args.lists[list_op::kApplyFusedEmaAdamListMs] =
                            args.lists[list_op::kApplyFusedEmaAdamListVs] =
                                args.lists[list_op::kApplyFusedEmaAdamListSs] = &state;
                        args.lists[list_op::kApplyFusedEmaAdamListCopies] = &copies;
                        args.step = &step;
                        list_op::ApplyFusedEmaAdamListDtypes dtypes{};
                        list_op::ApplyFusedEmaAdamListOptions options;
                        if (list_op::CheckApplyFusedEmaAdamList(
                                args, list_op::ApplyFusedEmaAdamListAttrs(), &dtypes, &options)
                                .empty()) {
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

    mod.def("list_opdef_columns", [] {
        py::list out;
        for (const list_op::ApplyFusedEmaAdamListOpDefColumn& c :
             list_op::ApplyFusedEmaAdamListOpDefColumns()) {
            py::list inputs, outputs;
            for (aea::DataType d : c.inputs) inputs.append(aea::DataTypeName(d));
            for (aea::DataType d : c.outputs) outputs.append(aea::DataTypeName(d));
            out.append(py::make_tuple(py::tuple(inputs), py::tuple(outputs)));
        }
        return out;
    },
       "The list OpDefs' dtype columns (op_host/apply_fused_ema_adam_list/"
       "apply_fused_ema_adam_list_opdef.h), the same for V1 and V2: per column the dtypes of "
       "the lists as inputs (grads ... model_copies) and as outputs (vars ... model_copies), an "
       "absent list as its placeholders'.");

    mod.def(
        "list_ub_bytes_per_element",
        [](const std::string& param, const std::string& state, const std::string& grad,
           const std::string& copy, bool amsgrad, bool gradScale, uint32_t bufferNum, bool ema) {
            return list_op::ApplyFusedEmaAdamListUbBytesPerElement(
                ParseApplyFusedEmaAdamListDtypes(param, state, grad, copy),
                MakeApplyFusedEmaAdamListOptions(amsgrad, gradScale, false, ema), bufferNum);
        },
        py::arg("param"), py::arg("state"), py::arg("grad"), py::arg("copy") = "",
        py::arg("amsgrad") = false, py::arg("grad_scale") = false, py::arg("buffer_num") = 2,
        py::arg("ema") = true,
        "UB bytes per chunk element of the list kernel (the tiling's one formula).");

    mod.def(
        "compute_list_tiling",
        [](const std::vector<uint64_t>& numels, const std::string& param, const std::string& state,
           const std::string& grad, const std::string& copy,
           const list_op::ApplyFusedEmaAdamListAttrs& attrs, bool amsgrad, bool gradScale,
           bool foundInf, const std::string& platform, uint32_t vectorCoreNum, uint32_t ubSize,
           bool ema, bool lrTensor, bool emaDecayTensor) {
            aea::Platform p = aea::FindPlatform(platform);
            if (vectorCoreNum != 0) p.vectorCoreNum = vectorCoreNum;
            if (ubSize != 0) p.ubSize = ubSize;
            try {
                return ApplyFusedEmaAdamListTilingToDict(
                    list_op::ComputeApplyFusedEmaAdamListTiling(
                        numels, ParseApplyFusedEmaAdamListDtypes(param, state, grad, copy), attrs,
                        MakeApplyFusedEmaAdamListOptions(amsgrad, gradScale, foundInf, ema,
                                                         lrTensor, emaDecayTensor),
                        p),
                    numels);
            } catch (const std::invalid_argument& e) {
                throw py::value_error(e.what());
            }
        },
        py::arg("numels"), py::arg("param"), py::arg("state"), py::arg("grad"),
        py::arg("copy") = "", py::arg("attrs") = list_op::ApplyFusedEmaAdamListAttrs(),
        py::arg("amsgrad") = false, py::arg("grad_scale") = false, py::arg("found_inf") = false,
        py::arg("platform") = "cpu", py::arg("vector_core_num") = 0, py::arg("ub_size") = 0,
        py::arg("ema") = true, py::arg("lr_tensor") = false, py::arg("ema_decay_tensor") = false,
        "ApplyFusedEmaAdamList host tiling for tensors of numels elements (platform preset, "
        "optionally overriding its core count or UB size); includes every core's segments.");

    mod.def("launch_list", &LaunchApplyFusedEmaAdamList, py::arg("grads"), py::arg("vars"),
            py::arg("ms"), py::arg("vs"), py::arg("ss"), py::arg("step"), py::arg("numels"),
            py::arg("param"), py::arg("state"), py::arg("grad"), py::arg("copy"), py::arg("attrs"),
            py::arg("max_vs") = py::none(), py::arg("copies") = py::none(),
            py::arg("grad_scale") = py::none(), py::arg("found_inf") = py::none(),
            py::arg("platform") = "cpu", py::arg("threads") = 0, py::arg("lr") = py::none(),
            py::arg("ema_decay") = py::none(), py::arg("overflow_mode") = "inf_nan",
            "Run the list kernel in place on lists of contiguous buffers through the twin (ss "
            "None: no EMA; lr, ema_decay: one-element fp32 buffers replacing the attributes) in "
            "the device's float-overflow mode; returns the tiling and per-block counters.");

    mod.def("launch_native_list", &LaunchApplyFusedEmaAdamListNative, py::arg("grads"),
            py::arg("vars"), py::arg("ms"), py::arg("vs"), py::arg("ss"), py::arg("max_vs"),
            py::arg("model_copies"), py::arg("numels"), py::arg("step"), py::arg("grad_scale"),
            py::arg("found_inf"), py::arg("param"), py::arg("state"), py::arg("grad"),
            py::arg("copy"), py::arg("attrs"), py::arg("threads") = 0, py::arg("isa") = "",
            py::arg("min_elems_per_thread") = aea::kNativeMinElemsPerThread,
            py::arg("streaming_bytes") = aea::kNativeStreamingBytes, py::arg("lr") = py::none(),
            py::arg("ema_decay") = py::none(),
            "Run the native list kernel (ApplyFusedEmaAdamList) in place on lists of contiguous "
            "buffers (ss, max_vs, model_copies, grad_scale, found_inf, lr, ema_decay: None when "
            "absent); returns the instruction set and the threads used (0: nothing ran).");

    mod.def("native_list_chunks",
            [](const std::vector<uint64_t>& numels, uint32_t threads) {
                py::list out;
                for (const aea::EmaAdamEntryChunk& c : aea::EmaAdamEntryChunks(
                         numels.data(), static_cast<uint32_t>(numels.size()), threads)) {
                    out.append(py::make_tuple(c.entry, c.offset, c.count));
                }
                return out;
            },
            py::arg("numels"), py::arg("threads"),
            "The chunks (tensor, offset, count) the native list kernel hands out for these "
            "element counts on `threads` threads.");
}
