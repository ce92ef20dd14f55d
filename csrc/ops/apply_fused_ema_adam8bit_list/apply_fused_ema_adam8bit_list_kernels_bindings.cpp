/**
 * @file apply_fused_ema_adam8bit_list_kernels_bindings.cpp
 * @brief ApplyFusedEmaAdam8bitList's _kernels bindings: its dtype contract, the encode thresholds
 *        the kernels derive from a map, and the native kernel on lists of numpy buffers.
 */
#include <cstdlib>
#include <optional>
#include <vector>

#include "apply_fused_ema_adam8bit_list_check.h"
#include "apply_fused_ema_adam8bit_list_native.h"
#include "apply_fused_ema_adam8bit_list_tiling.h"
#include "apply_fused_ema_adam8bit_list_twin_run.h"
#include "apply_fused_ema_adam8bit_list_tiling_key.h"
#include "ema_adam_attrs.h"
#include "kernels_bindings.h"

namespace {

using namespace ascend_ema_adam::kernels_bindings;
namespace op8 = ascend_ema_adam::apply_fused_ema_adam8bit_list;

using BufferList = std::vector<py::buffer>;
using OptionalList = std::optional<BufferList>;

/** Entry pointers of one list, entry i holding counts[i] elements of `elemBytes`. */
std::vector<void*> Pointers(const BufferList& list, const char* name,
                            const std::vector<uint64_t>& counts, uint32_t elemBytes)
{
    if (list.size() != counts.size()) {
        throw py::value_error(std::string(name) + " has " + std::to_string(list.size()) +
                              " entries, grads has " + std::to_string(counts.size()));
    }
    std::vector<void*> ptrs;
    for (size_t i = 0; i < list.size(); ++i) {
        const std::string entry = std::string(name) + "[" + std::to_string(i) + "]";
        ptrs.push_back(BufferPtr(list[i], entry.c_str(), counts[i] * elemBytes, true));
    }
    return ptrs;
}

/** aclDataType of a buffer from its format; a 16-bit integer view stands for `declared` (bf16,
 *  which numpy cannot export, arrives as uint16). */
int32_t CodeOf(const py::buffer_info& info, aea::DataType declared)
{
    const std::string f = info.format;
    if (f == "f") return aea::CannCodeOf(aea::DataType::kFloat32);
    if (f == "e") return aea::CannCodeOf(aea::DataType::kFloat16);
    if (f == "B") return op8::kApplyFusedEmaAdam8bitListCodeDtype;
    if (f == "q" || f == "l") return aea::CannCodeOf(aea::DataType::kInt64);
    if (f == "i") return 3;  // ACL_INT32: refused wherever it comes, named in the message
    if ((f == "H" || f == "h") && aea::DataTypeSize(declared) == 2)
        return aea::CannCodeOf(declared);
    return -1;
}

/** One list as the check sees it: each buffer 1-D, its dtype from its format. */
struct DescribedList {
    std::vector<std::vector<int64_t>> shapes;
    std::vector<op8::ListEntryArg> entries;

    DescribedList(const BufferList* list, aea::DataType declared)
    {
        if (list == nullptr) return;
        std::vector<int32_t> codes;
        for (const py::buffer& b : *list) {
            const py::buffer_info info = b.request();
            shapes.push_back({static_cast<int64_t>(info.size)});
            codes.push_back(CodeOf(info, declared));
        }
        for (size_t i = 0; i < shapes.size(); ++i) {
            entries.push_back({codes[i], &shapes[i]});
        }
    }
};

/** A one-element buffer of `bytes`, or null. */
template <class T>
const T* Scalar(const std::optional<py::buffer>& b, const char* name)
{
    return b ? static_cast<const T*>(BufferPtr(*b, name, sizeof(T), false)) : nullptr;
}

op8::ApplyFusedEmaAdam8bitListDtypes ParseDtypes(const std::string& param, const std::string& grad,
                                                 const std::string& copy)
{
    op8::ApplyFusedEmaAdam8bitListDtypes d;
    d.param = ParseDtype(param);
    d.grad = ParseDtype(grad);
    d.hasCopy = !copy.empty();
    if (d.hasCopy) {
        d.copy = ParseDtype(copy);
    }
    return d;
}

/** A launch on lists of contiguous buffers (ss, model_copies, grad_scale, found_inf, lr,
 *  ema_decay: None when absent): the operator's checks on the buffers first (nothing is touched on
 *  a refusal), then run(tiling flags, dtypes, options, buffers, numels), which launches a kernel.
 */
template <class Run>
py::dict LaunchApplyFusedEmaAdam8bitList(
    const BufferList& grads, const BufferList& vars, const BufferList& ms, const BufferList& vs,
    const BufferList& mAbsmaxes, const BufferList& vAbsmaxes, const OptionalList& ss,
    const OptionalList& copies, const std::vector<uint64_t>& numels, const py::buffer& qmapM,
    const py::buffer& qmapV, const py::buffer& step, const std::optional<py::buffer>& gradScale,
    const std::optional<py::buffer>& foundInf, const std::string& param, const std::string& grad,
    const std::string& copy, const aea::Attrs& attrs, bool maximize,
    const std::optional<py::buffer>& lr, const std::optional<py::buffer>& emaDecay, const Run& run)
{
    const op8::ApplyFusedEmaAdam8bitListDtypes declared = ParseDtypes(param, grad, copy);
    if (declared.hasCopy != copies.has_value()) {
        throw py::value_error("model_copies must be given exactly when copy names a dtype");
    }
    // The operator's check first, on what the buffers are: nothing is touched on a refusal.
    const DescribedList lists[op8::kApplyFusedEmaAdam8bitListTensorLists] = {
        {&grads, declared.grad},
        {&vars, declared.param},
        {&ms, declared.param},
        {&vs, declared.param},
        {&mAbsmaxes, declared.param},
        {&vAbsmaxes, declared.param},
        {ss ? &*ss : nullptr, declared.param},
        {copies ? &*copies : nullptr, declared.copy}};
    op8::ApplyFusedEmaAdam8bitListArgs args;
    for (int i = 0; i < op8::kApplyFusedEmaAdam8bitListTensorLists; ++i) {
        args.lists[i] = &lists[i].entries;
    }
    struct Described {
        std::vector<int64_t> shape;
        aea::TensorArg arg;
        Described(const char* name, const py::buffer& b, aea::DataType declaredType)
            : shape{static_cast<int64_t>(b.request().size)},
              arg{name, CodeOf(b.request(), declaredType), shape}
        {
        }
    };
    const Described mapM("qmapM", qmapM, aea::DataType::kFloat32);
    const Described mapV("qmapV", qmapV, aea::DataType::kFloat32);
    const Described stepArg("step", step, aea::DataType::kInt64);
    std::optional<Described> scale, found, lrArg, decay;
    if (gradScale) scale.emplace("gradScaleOptional", *gradScale, aea::DataType::kFloat32);
    if (foundInf) found.emplace("foundInfOptional", *foundInf, aea::DataType::kFloat32);
    if (lr) lrArg.emplace("lrTensorOptional", *lr, aea::DataType::kFloat32);
    if (emaDecay) decay.emplace("emaDecayTensorOptional", *emaDecay, aea::DataType::kFloat32);
    args.qmapM = &mapM.arg;
    args.qmapV = &mapV.arg;
    args.step = &stepArg.arg;
    args.gradScale = scale ? &scale->arg : nullptr;
    args.foundInf = found ? &found->arg : nullptr;
    args.lr = lrArg ? &lrArg->arg : nullptr;
    args.emaDecay = decay ? &decay->arg : nullptr;
    op8::ApplyFusedEmaAdam8bitListDtypes dtypes{aea::DataType::kFloat32, aea::DataType::kFloat32};
    op8::ApplyFusedEmaAdam8bitListOptions flags;
    aea::Refusal refusal =
        op8::CheckApplyFusedEmaAdam8bitList(args, attrs, maximize, &dtypes, &flags);
    const auto* qm = static_cast<const float*>(BufferPtr(qmapM, "qmap_m", 256 * 4, false));
    const auto* qv = static_cast<const float*>(BufferPtr(qmapV, "qmap_v", 256 * 4, false));
    if (refusal.empty()) refusal = op8::CheckApplyFusedEmaAdam8bitListMap(qm, "qmapM");
    if (refusal.empty()) refusal = op8::CheckApplyFusedEmaAdam8bitListMap(qv, "qmapV");
    if (!refusal.empty()) {
        throw py::value_error(refusal);
    }
    if (!numels.empty() && (dtypes.param != declared.param || dtypes.grad != declared.grad ||
                            (dtypes.hasCopy && dtypes.copy != declared.copy))) {
        throw py::value_error("the buffers' dtypes are not the declared param, grad and copy");
    }
    std::vector<uint64_t> blocks;
    for (uint64_t n : numels) {
        blocks.push_back((n + 255U) / 256U);
    }
    const auto g = Pointers(grads, "grads", numels, aea::DataTypeSize(declared.grad));
    const auto p = Pointers(vars, "vars", numels, aea::DataTypeSize(declared.param));
    const auto m = Pointers(ms, "ms", numels, 1);
    const auto v = Pointers(vs, "vs", numels, 1);
    const auto ma = Pointers(mAbsmaxes, "m_absmaxes", blocks, 4);
    const auto va = Pointers(vAbsmaxes, "v_absmaxes", blocks, 4);
    const auto s = ss ? Pointers(*ss, "ss", numels, 4) : std::vector<void*>{};
    const auto c = copies ? Pointers(*copies, "model_copies", numels,
                                     aea::DataTypeSize(declared.copy))
                          : std::vector<void*>{};
    ApplyFusedEmaAdam8bitListTilingData t{};
    t.hyper = aea::HyperParamsOf(attrs);
    t.maximize = maximize ? 1U : 0U;
    t.hasGradScale = gradScale ? 1U : 0U;
    t.hasFoundInf = foundInf ? 1U : 0U;
    t.tensorNum = static_cast<uint32_t>(numels.size());
    t.hasEma = ss ? 1U : 0U;
    t.hasLrTensor = lr ? 1U : 0U;
    t.hasEmaDecayTensor = emaDecay ? 1U : 0U;
    op8::ApplyFusedEmaAdam8bitListBuffers b;
    b.tensorNum = t.tensorNum;
    b.numels = numels.data();
    b.grads = g.data();
    b.vars = p.data();
    b.ms = m.data();
    b.vs = v.data();
    b.mAbsmaxes = ma.data();
    b.vAbsmaxes = va.data();
    b.ss = ss ? s.data() : nullptr;
    b.copies = copies ? c.data() : nullptr;
    b.qmapM = qm;
    b.qmapV = qv;
    b.step = Scalar<int64_t>(step, "step");
    b.gradScale = Scalar<float>(gradScale, "grad_scale");
    b.foundInf = Scalar<float>(foundInf, "found_inf");
    b.lr = Scalar<float>(lr, "lr");
    b.emaDecay = Scalar<float>(emaDecay, "ema_decay");
    return run(t, declared, flags, b, numels);
}

/** The encode a binding names: "" (per CPU or ASCEND_EMA_ADAM_8BIT_ENCODE), "table", "planes",
 *  "search". */
aea::Adam8bitEncode EncodeOf(const std::string& name)
{
    if (name.empty()) {
        return aea::Adam8bitEncode::kAuto;
    }
    aea::Adam8bitEncode e;
    if (aea::Adam8bitEncodeOfName(name.c_str(), e)) {
        return e;
    }
    throw py::value_error("encode='" + name + "': expected 'table', 'planes', 'search' or ''");
}

/** The native kernel (LaunchApplyFusedEmaAdam8bitList's buffers). */
py::dict LaunchApplyFusedEmaAdam8bitListNative(
    const BufferList& grads, const BufferList& vars, const BufferList& ms, const BufferList& vs,
    const BufferList& mAbsmaxes, const BufferList& vAbsmaxes, const OptionalList& ss,
    const OptionalList& copies, const std::vector<uint64_t>& numels, const py::buffer& qmapM,
    const py::buffer& qmapV, const py::buffer& step, const std::optional<py::buffer>& gradScale,
    const std::optional<py::buffer>& foundInf, const std::string& param, const std::string& grad,
    const std::string& copy, const aea::Attrs& attrs, bool maximize, uint32_t threads,
    const std::string& isa, uint64_t minElemsPerThread, const std::optional<py::buffer>& lr,
    const std::optional<py::buffer>& emaDecay, bool bytePlanes, const std::string& encode)
{
    const auto run = [&](const ApplyFusedEmaAdam8bitListTilingData& t,
                         const op8::ApplyFusedEmaAdam8bitListDtypes& dtypes,
                         const op8::ApplyFusedEmaAdam8bitListOptions&,
                         const op8::ApplyFusedEmaAdam8bitListBuffers& b,
                         const std::vector<uint64_t>&) {
        aea::NativeOptions options =
            NativeOptionsOf(threads, isa, minElemsPerThread, aea::kNativeStreamingBytes);
        options.bytePlanes = bytePlanes;
        options.encode8bit = EncodeOf(encode);
        uint32_t used = 0;
        bool decodedByPlanes = false;
        aea::Adam8bitEncode encoded = aea::Adam8bitEncode::kAuto;
        try {
            const aea::Isa resolved = aea::ResolveIsa(options.isa);
            decodedByPlanes = op8::ApplyFusedEmaAdam8bitListBytePlaneDecode(resolved, options);
            encoded = op8::ApplyFusedEmaAdam8bitListEncodeOf(resolved, options);
            py::gil_scoped_release release;
            used = op8::RunApplyFusedEmaAdam8bitListNative(t, dtypes, b, options);
        } catch (const std::invalid_argument& e) {
            throw py::value_error(e.what());
        }
        py::dict out;
        out["isa"] = isa.empty() ? std::string(aea::NativeIsa()) : isa;
        out["threads"] = used;
        out["byte_planes"] = decodedByPlanes;
        out["encode"] = aea::Adam8bitEncodeName(encoded);
        return out;
    };
    return LaunchApplyFusedEmaAdam8bitList(grads, vars, ms, vs, mAbsmaxes, vAbsmaxes, ss, copies,
                                           numels, qmapM, qmapV, step, gradScale, foundInf, param,
                                           grad, copy, attrs, maximize, lr, emaDecay, run);
}

py::dict TilingToDict(const op8::ApplyFusedEmaAdam8bitListTilingResult& r)
{
    const ApplyFusedEmaAdam8bitListTilingData& t = r.data;
    py::dict d = LaunchToDict(r);
    d["chunk_blocks"] = t.chunkBlocks;
    d["used_core_num"] = t.usedCoreNum;
    d["tensor_num"] = t.tensorNum;
    d["has_ema"] = t.hasEma;
    py::list starts;
    for (uint32_t core = 0; core <= t.usedCoreNum; ++core) {
        starts.append(py::make_tuple(t.coreStart[core].tensor, t.coreStart[core].block));
    }
    d["core_starts"] = starts;
    return d;
}

/** The AscendC kernel on the twin (LaunchApplyFusedEmaAdam8bitList's buffers): its tiling and
 *  per-block counters. */
py::dict LaunchApplyFusedEmaAdam8bitListOnTwin(
    const BufferList& grads, const BufferList& vars, const BufferList& ms, const BufferList& vs,
    const BufferList& mAbsmaxes, const BufferList& vAbsmaxes, const OptionalList& ss,
    const OptionalList& copies, const std::vector<uint64_t>& numels, const py::buffer& qmapM,
    const py::buffer& qmapV, const py::buffer& step, const std::optional<py::buffer>& gradScale,
    const std::optional<py::buffer>& foundInf, const std::string& param, const std::string& grad,
    const std::string& copy, const aea::Attrs& attrs, bool maximize, const std::string& platform,
    uint32_t threads, const std::optional<py::buffer>& lr,
    const std::optional<py::buffer>& emaDecay, const std::string& overflowMode)
{
    const aea::Platform target = aea::FindPlatform(platform);
    const twin::FloatOverflowMode overflow = ParseOverflowMode(overflowMode);
    const auto run = [&](const ApplyFusedEmaAdam8bitListTilingData&,
                         const op8::ApplyFusedEmaAdam8bitListDtypes& dtypes,
                         const op8::ApplyFusedEmaAdam8bitListOptions& flags,
                         const op8::ApplyFusedEmaAdam8bitListBuffers& b,
                         const std::vector<uint64_t>& counts) {
        const op8::ApplyFusedEmaAdam8bitListTilingResult tiling =
            op8::ComputeApplyFusedEmaAdam8bitListTiling(counts, dtypes, attrs, flags, target);
        twin::LaunchResult result;
        {
            py::gil_scoped_release release;
            result = op8::RunApplyFusedEmaAdam8bitListOnTwin(tiling, target, b, threads, overflow);
        }
        return TwinLaunchToDict(TilingToDict(tiling), result);
    };
    return LaunchApplyFusedEmaAdam8bitList(grads, vars, ms, vs, mAbsmaxes, vAbsmaxes, ss, copies,
                                           numels, qmapM, qmapV, step, gradScale, foundInf, param,
                                           grad, copy, attrs, maximize, lr, emaDecay, run);
}

}  // namespace

AEA_KERNELS_BINDINGS(apply_fused_ema_adam8bit_list)
{
    mod.def("adam8bit_dtype_contract", [] {
        py::list out;
#define AEA_ADAM8BIT_ROW(key, P, G, C)                                                           \
    out.append(py::make_tuple(                                                                   \
        aea::DataTypeName(op8::kApplyFusedEmaAdam8bitListDtype_##P),                             \
        aea::DataTypeName(op8::kApplyFusedEmaAdam8bitListDtype_##G),                             \
        op8::kApplyFusedEmaAdam8bitListHasCopy_##C                                               \
            ? py::object(py::str(aea::DataTypeName(op8::kApplyFusedEmaAdam8bitListDtype_##C)))   \
            : py::object(py::none()),                                                            \
        APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_##key));                                               \
    if (op8::ApplyFusedEmaAdam8bitListTilingKeyOf({op8::kApplyFusedEmaAdam8bitListDtype_##P,     \
                                                   op8::kApplyFusedEmaAdam8bitListDtype_##G,     \
                                                   op8::kApplyFusedEmaAdam8bitListHasCopy_##C,   \
                                                   op8::kApplyFusedEmaAdam8bitListDtype_##C}) != \
        APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_##key) {                                               \
        throw std::logic_error("ApplyFusedEmaAdam8bitListTilingKeyOf disagrees with the table"); \
    }
        APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ADAM8BIT_ROW)
#undef AEA_ADAM8BIT_ROW
        return out;
    }, "ApplyFusedEmaAdam8bitList's dtype contract: (param, grad, copy or None, tiling key) rows.");

    mod.def("adam8bit_encode_thresholds",
            [](const py::buffer& map, const py::buffer& out) {
                const auto* q = static_cast<const float*>(BufferPtr(map, "map", 256 * 4, false));
                auto* t = static_cast<float*>(BufferPtr(out, "out", 255 * 4, true));
                op8::ApplyFusedEmaAdam8bitListEncodeThresholds(q, t);
            },
            py::arg("map"), py::arg("out"),
            "The 255 encode thresholds the kernels derive from a 256-entry fp32 map, into out.");

    mod.def("adam8bit_encode_tables",
            [](const py::buffer& map) {
                const auto* q = static_cast<const float*>(BufferPtr(map, "map", 256 * 4, false));
                const op8::ApplyFusedEmaAdam8bitListEncodeTables t =
                    op8::ApplyFusedEmaAdam8bitListEncodeTablesOf(q);
                py::dict d;
                d["table"] = t.table;
                d["unit"] = t.unit;
                d["planes"] = t.planes;
                d["table_entries"] = t.tableEntries;
                return d;
            },
            py::arg("map"),
            "The encode tables the native loops build for a 256-entry fp32 map: table (the "
            "one-gather table), unit (it covers [-1, 1]), planes (its byte planes: encode "
            "'planes') and table_entries.");

    mod.def("launch_native_adam8bit_list", &LaunchApplyFusedEmaAdam8bitListNative, py::arg("grads"),
            py::arg("vars"), py::arg("ms"), py::arg("vs"), py::arg("m_absmaxes"),
            py::arg("v_absmaxes"), py::arg("ss"), py::arg("model_copies"), py::arg("numels"),
            py::arg("qmap_m"), py::arg("qmap_v"), py::arg("step"), py::arg("grad_scale"),
            py::arg("found_inf"), py::arg("param"), py::arg("grad"), py::arg("copy"),
            py::arg("attrs"), py::arg("maximize"), py::arg("threads") = 0, py::arg("isa") = "",
            py::arg("min_elems_per_thread") = aea::kNativeMinElemsPerThread,
            py::arg("lr") = py::none(), py::arg("ema_decay") = py::none(),
            py::arg("byte_planes") = true, py::arg("encode") = "",
            "Run the native kernel of ApplyFusedEmaAdam8bitList in place on lists of contiguous "
            "buffers (ss, model_copies, grad_scale, found_inf, lr, ema_decay: None when absent; "
            "byte_planes false: the AVX-512 loops decode by gathers even with VBMI; encode "
            "'table', 'planes' (VBMI loops only) or 'search', '' as the CPU and "
            "ASCEND_EMA_ADAM_8BIT_ENCODE choose); returns the instruction set, the threads used "
            "(0: nothing ran), whether the codes were "
            "decoded by byte planes and how they were encoded ('table', 'planes' or 'search').");

    mod.def("adam8bit_native_path", [] {
        const aea::NativeOptions options;  // a launch's own: the CPU device's defaults
        py::dict d;
        try {
            const aea::Isa isa = aea::ResolveIsa(options.isa);
            d["isa"] = aea::IsaName(isa);
            d["decode"] = op8::ApplyFusedEmaAdam8bitListBytePlaneDecode(isa, options)
                              ? "byte planes"
                              : "gathers";
            const bool planes = op8::ApplyFusedEmaAdam8bitListBytePlaneDecode(isa, options);
            d["encode"] =
                aea::Adam8bitEncodeName(op8::ApplyFusedEmaAdam8bitListEncodeOf(isa, options));
            const char* env = std::getenv("ASCEND_EMA_ADAM_8BIT_ENCODE");
            d["encode_chosen_by"] = env != nullptr && *env != '\0' ? "environment"
                                    : op8::ApplyFusedEmaAdam8bitListMeasuredEncode(isa, planes) !=
                                            aea::Adam8bitEncode::kAuto
                                        ? "measurement"
                                        : "default";
        } catch (const std::invalid_argument& e) {
            throw py::value_error(e.what());
        }
        return d;
    }, "How the 8-bit native loops look codes up now (the environment read as a launch reads it): "
       "isa, decode ('byte planes' or 'gathers'), encode ('table', 'planes' or 'search') and what "
       "chose it ('environment': ASCEND_EMA_ADAM_8BIT_ENCODE; 'measurement': this process's first "
       "AVX-512 launch timed each; 'default': the table, not measured yet or not AVX-512).");

    mod.def("launch_adam8bit_list", &LaunchApplyFusedEmaAdam8bitListOnTwin, py::arg("grads"),
            py::arg("vars"), py::arg("ms"), py::arg("vs"), py::arg("m_absmaxes"),
            py::arg("v_absmaxes"), py::arg("ss"), py::arg("model_copies"), py::arg("numels"),
            py::arg("qmap_m"), py::arg("qmap_v"), py::arg("step"), py::arg("grad_scale"),
            py::arg("found_inf"), py::arg("param"), py::arg("grad"), py::arg("copy"),
            py::arg("attrs"), py::arg("maximize"), py::arg("platform") = "cpu",
            py::arg("threads") = 0, py::arg("lr") = py::none(), py::arg("ema_decay") = py::none(),
            py::arg("overflow_mode") = "inf_nan",
            "Run ApplyFusedEmaAdam8bitList's AscendC kernel on the twin in place on lists of "
            "contiguous buffers (as launch_native_adam8bit_list); returns the tiling and per-block "
            "counters.");

    mod.def("native_adam8bit_list_chunks",
            [](const std::vector<uint64_t>& numels, uint32_t threads) {
                py::list out;
                for (const op8::ApplyFusedEmaAdam8bitListChunk& c :
                     op8::ApplyFusedEmaAdam8bitListNativeChunks(
                         numels.data(), static_cast<uint32_t>(numels.size()), threads)) {
                    out.append(py::make_tuple(c.entry, c.block, c.count));
                }
                return out;
            },
            py::arg("numels"), py::arg("threads"),
            "The runs (tensor, first block, blocks) of 256-element quantization blocks the native "
            "8-bit kernel hands out for these element counts on `threads` threads.");
}
