/**
 * @file apply_fused_ema_adam8bit_list_check.cpp
 * @brief CheckApplyFusedEmaAdam8bitList and CheckApplyFusedEmaAdam8bitListMap (see the header).
 *        Entry names are built only for a refusal.
 */
#include "apply_fused_ema_adam8bit_list_check.h"

#include <cmath>
#include <string>

#include "apply_fused_ema_adam8bit_list_tiling_key.h"

namespace ascend_ema_adam::apply_fused_ema_adam8bit_list {

namespace {

constexpr const char* const* kNames = kApplyFusedEmaAdam8bitListNames;
constexpr int64_t kBlock = 256;
constexpr int64_t kMapSize = 256;
const int32_t kFp32Code = CannCodeOf(DataType::kFloat32);

/** Entry `index` of list `list` with its name ("msRef[5]"). */
struct NamedEntry : NamedListEntry {
    NamedEntry(int list, size_t index, const ListEntryArg& e) : NamedListEntry(kNames[list], index, e) {}
};

const std::vector<ListEntryArg>& List(const ApplyFusedEmaAdam8bitListArgs& args, int list)
{
    return EntriesOrEmpty(args.lists[list]);
}

bool IsOptional(int list)
{
    return list == kApplyFusedEmaAdam8bitListSs || list == kApplyFusedEmaAdam8bitListCopies;
}

/** An optional list given as placeholders: one tensor per entry, every one without elements, of
 *  the dtype the list would have (fp32 for ssRef, varsRef's for modelCopiesRef). The NPU path
 *  passes them for an absent list, as the list op's does (docs/ACLNN.md, "Absent lists"). */
bool IsPlaceholderList(const ApplyFusedEmaAdam8bitListArgs& args, int list)
{
    const std::vector<ListEntryArg>& entries = List(args, list);
    const std::vector<ListEntryArg>& vars = List(args, kApplyFusedEmaAdam8bitListVars);
    if (!IsOptional(list) || entries.empty() || vars.empty()) return false;
    return AllPlaceholders(entries,
                           list == kApplyFusedEmaAdam8bitListSs ? kFp32Code : vars[0].dtype);
}

/** List `list` holds values: it has tensors, and (an optional list) not only placeholders. */
bool HoldsValues(const ApplyFusedEmaAdam8bitListArgs& args, int list)
{
    return !List(args, list).empty() && !IsPlaceholderList(args, list);
}

Refusal CheckLengths(const ApplyFusedEmaAdam8bitListArgs& args)
{
    const size_t n = List(args, kApplyFusedEmaAdam8bitListGrads).size();
    for (int list = kApplyFusedEmaAdam8bitListGrads; list < kApplyFusedEmaAdam8bitListTensorLists;
         ++list) {
        const size_t size = List(args, list).size();
        if (size > kApplyFusedEmaAdam8bitListMaxTensors && !args.wholeCall) {
            return std::string(kNames[list]) + " has " + std::to_string(size) +
                   " tensors, expected at most " +
                   std::to_string(kApplyFusedEmaAdam8bitListMaxTensors) +
                   " (CANN's limit per list: launch once per slice)";
        }
        if (size != n && !(IsOptional(list) && size == 0)) {
            return ListLengthRefusal(kNames[list], size, n, IsOptional(list));
        }
    }
    return {};
}

Refusal ExpectCode(const TensorArg& t, int32_t code, const char* why)
{
    if (t.dtype == code) {
        return {};
    }
    return std::string(t.name) + " has dtype " + DescribeDtype(t.dtype) + ", expected " +
           DescribeDtype(code) + ": " + why;
}

/** The contract on the entries 0 (each list has one dtype, checked before). */
Refusal CheckDtypeContract(const ApplyFusedEmaAdam8bitListArgs& args,
                           ApplyFusedEmaAdam8bitListDtypes* out)
{
    if (List(args, kApplyFusedEmaAdam8bitListGrads).empty()) {
        return {};  // nothing to update: any dtypes (the launch does nothing)
    }
    const auto entry0 = [&](int list) { return NamedEntry(list, 0, List(args, list)[0]); };
    const NamedEntry var = entry0(kApplyFusedEmaAdam8bitListVars);
    if (Refusal r = CheckFloatDtype(var.arg); !r.empty()) return r;
    const NamedEntry grad = entry0(kApplyFusedEmaAdam8bitListGrads);
    if (Refusal r = CheckFloatDtype(grad.arg); !r.empty()) return r;
    for (int list : {kApplyFusedEmaAdam8bitListMs, kApplyFusedEmaAdam8bitListVs}) {
        if (Refusal r = ExpectCode(entry0(list).arg, kApplyFusedEmaAdam8bitListCodeDtype,
                                   "the moments are stored as 8-bit codes");
            !r.empty()) {
            return r;
        }
    }
    for (int list : {kApplyFusedEmaAdam8bitListMAbsmaxes, kApplyFusedEmaAdam8bitListVAbsmaxes,
                     kApplyFusedEmaAdam8bitListSs}) {
        if (!HoldsValues(args, list)) continue;
        if (Refusal r =
                ExpectCode(entry0(list).arg, kFp32Code,
                           list == kApplyFusedEmaAdam8bitListSs ? "the EMA is kept in fp32"
                                                                : "the block scales are fp32");
            !r.empty()) {
            return r;
        }
    }
    out->param = FindDataTypeByCode(var.arg.dtype)->type;
    out->grad = FindDataTypeByCode(grad.arg.dtype)->type;
    out->hasCopy = HoldsValues(args, kApplyFusedEmaAdam8bitListCopies);
    if (out->hasCopy) {
        const NamedEntry copy = entry0(kApplyFusedEmaAdam8bitListCopies);
        const DataTypeInfo* info = FindDataTypeByCode(copy.arg.dtype);
        if (info == nullptr || !info->isFloat || info->type == DataType::kFloat32) {
            return copy.name + " has dtype " + DescribeDtype(copy.arg.dtype) +
                   ", expected ACL_FLOAT16 or ACL_BF16: model copies are the 16-bit weights";
        }
        if (out->param != DataType::kFloat32) {
            return std::string("modelCopiesRef needs fp32 varsRef (the master weights), varsRef "
                               "has dtype ") +
                   DescribeDtype(var.arg.dtype);
        }
        out->copy = info->type;
    }
    return {};
}

Refusal CheckScalarTensors(const ApplyFusedEmaAdam8bitListArgs& args)
{
    if (args.step == nullptr || args.qmapM == nullptr || args.qmapV == nullptr) {
        return "step, qmapM and qmapV are required";
    }
    for (const TensorArg* map : {args.qmapM, args.qmapV}) {
        if (Refusal r = CheckDtypeIs(*map, DataType::kFloat32); !r.empty()) return r;
        if (map->shape.size() != 1 || map->shape[0] != kMapSize) {
            return std::string(map->name) + " has shape " + ShapeToString(map->shape) +
                   ", expected [256]: one value per 8-bit code";
        }
    }
    if (Refusal r = CheckStepDtype(*args.step); !r.empty()) return r;
    if (Refusal r = CheckStepShape(*args.step); !r.empty()) return r;
    for (const TensorArg* t : {args.gradScale, args.foundInf, args.lr, args.emaDecay}) {
        if (t == nullptr) continue;
        if (Refusal r = CheckDtypeIs(*t, DataType::kFloat32); !r.empty()) return r;
        if (Refusal r = CheckOneElement(*t); !r.empty()) return r;
    }
    return {};
}

Refusal CheckShapes(const ApplyFusedEmaAdam8bitListArgs& args)
{
    const std::vector<ListEntryArg>& grads = List(args, kApplyFusedEmaAdam8bitListGrads);
    for (size_t i = 0; i < grads.size(); ++i) {
        const NamedEntry grad(kApplyFusedEmaAdam8bitListGrads, i, grads[i]);
        if (grad.arg.shape.size() > kApplyFusedEmaAdam8bitListMaxRank) {
            return grad.name + " has " + std::to_string(grad.arg.shape.size()) +
                   " dimensions, expected at most " +
                   std::to_string(kApplyFusedEmaAdam8bitListMaxRank);
        }
        for (int list : {kApplyFusedEmaAdam8bitListVars, kApplyFusedEmaAdam8bitListMs,
                         kApplyFusedEmaAdam8bitListVs, kApplyFusedEmaAdam8bitListSs,
                         kApplyFusedEmaAdam8bitListCopies}) {
            if (!HoldsValues(args, list)) continue;
            const NamedEntry t(list, i, List(args, list)[i]);
            const std::string group = std::string("entry ") + std::to_string(i) + " of every list";
            if (Refusal r = CheckSameShape(t.arg, grad.arg, group.c_str()); !r.empty()) return r;
        }
        const int64_t blocks = (Numel(grad.arg.shape) + kBlock - 1) / kBlock;
        for (int list :
             {kApplyFusedEmaAdam8bitListMAbsmaxes, kApplyFusedEmaAdam8bitListVAbsmaxes}) {
            const NamedEntry t(list, i, List(args, list)[i]);
            if (t.arg.shape.size() != 1 || t.arg.shape[0] != blocks) {
                return t.name + " has shape " + ShapeToString(t.arg.shape) + ", expected [" +
                       std::to_string(blocks) + "]: one scale per block of 256 elements of " +
                       grad.name + " (" + ShapeToString(grad.arg.shape) + ")";
            }
        }
    }
    return {};
}

}  // namespace

std::string ApplyFusedEmaAdam8bitListEntryName(int list, size_t index)
{
    return EntryName(kNames[list], index);
}

Refusal CheckApplyFusedEmaAdam8bitList(const ApplyFusedEmaAdam8bitListArgs& args,
                                       const Attrs& attrs, bool maximize,
                                       ApplyFusedEmaAdam8bitListDtypes* dtypes,
                                       ApplyFusedEmaAdam8bitListOptions* options)
{
    ApplyFusedEmaAdam8bitListDtypes d{DataType::kFloat32, DataType::kFloat32};
    if (Refusal r = CheckLengths(args); !r.empty()) return r;
    if (Refusal r = CheckOneDtypePerList(args.lists, kNames, kApplyFusedEmaAdam8bitListTensorLists);
        !r.empty()) {
        return r;
    }
    if (Refusal r = CheckDtypeContract(args, &d); !r.empty()) return r;
    if (Refusal r = CheckScalarTensors(args); !r.empty()) return r;
    if (Refusal r = CheckShapes(args); !r.empty()) return r;
    if (Refusal r = CheckAttrs(attrs); !r.empty()) return r;
    *dtypes = d;
    options->maximize = maximize;
    options->gradScale = args.gradScale != nullptr;
    options->foundInf = args.foundInf != nullptr;
    options->ema = HoldsValues(args, kApplyFusedEmaAdam8bitListSs) ||
                   List(args, kApplyFusedEmaAdam8bitListGrads).empty();
    options->lrTensor = args.lr != nullptr;
    options->emaDecayTensor = args.emaDecay != nullptr;
    return {};
}

Refusal CheckApplyFusedEmaAdam8bitListMap(const float* map, const char* name)
{
    for (int64_t k = 0; k < kMapSize; ++k) {
        if (!std::isfinite(map[k]) || std::fabs(map[k]) > 1.0f) {
            return std::string(name) + "[" + std::to_string(k) + "] is " + FormatNumber(map[k], true) +
                   ", expected a finite value within [-1, 1] (the encoded values m' / absmax' "
                   "lie there)";
        }
        if (k > 0 && map[k] < map[k - 1]) {
            return std::string(name) + "[" + std::to_string(k) + "] is " +
                   FormatNumber(map[k], true) + ", below " + name + "[" + std::to_string(k - 1) +
                   "]: a map is sorted (non-decreasing), the encode searches it";
        }
    }
    return {};
}

uint32_t ApplyFusedEmaAdam8bitListTilingKeyOf(const ApplyFusedEmaAdam8bitListDtypes& t)
{
#define AEA_ADAM8BIT_KEY_ROW(key, P, G, C)                               \
    if (t.param == kApplyFusedEmaAdam8bitListDtype_##P &&                \
        t.grad == kApplyFusedEmaAdam8bitListDtype_##G &&                 \
        t.hasCopy == kApplyFusedEmaAdam8bitListHasCopy_##C &&            \
        (!t.hasCopy || t.copy == kApplyFusedEmaAdam8bitListDtype_##C)) { \
        return APPLY_FUSED_EMA_ADAM8BIT_LIST_KEY_##key;                  \
    }
    APPLY_FUSED_EMA_ADAM8BIT_LIST_KEYS(AEA_ADAM8BIT_KEY_ROW)
#undef AEA_ADAM8BIT_KEY_ROW
    return 0;
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam8bit_list
