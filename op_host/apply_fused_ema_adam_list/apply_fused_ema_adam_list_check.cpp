/**
 * @file apply_fused_ema_adam_list_check.cpp
 * @brief CheckApplyFusedEmaAdamList (see the header). Entry names are built only for a refusal:
 *        a parameter group of thousands of tensors is checked without a string per tensor.
 */
#include "apply_fused_ema_adam_list_check.h"

#include <string>

namespace ascend_ema_adam::apply_fused_ema_adam_list {

namespace {

constexpr const char* const* kNames = kApplyFusedEmaAdamListNames;
constexpr const char* kStateGroup = "msRef, vsRef, ssRef and maxVsRef";
const int32_t kFp32Code = CannCodeOf(DataType::kFloat32);

/** Entry `index` of list `list` with its name ("msRef[5]"). */
struct NamedEntry : NamedListEntry {
    NamedEntry(int list, size_t index, const ListEntryArg& e) : NamedListEntry(kNames[list], index, e) {}
};

const std::vector<ListEntryArg>& List(const ApplyFusedEmaAdamListArgs& args, int list)
{
    return EntriesOrEmpty(args.lists[list]);
}

/** The list may be absent: max_vs and model copies always, ss with args.emaOptional. */
bool IsOptional(const ApplyFusedEmaAdamListArgs& args, int list)
{
    return list >= kApplyFusedEmaAdamListMaxVs ||
           (list == kApplyFusedEmaAdamListSs && args.emaOptional);
}

/** The list holds at least one tensor (its values, or an absent list's placeholders). */
bool ApplyFusedEmaAdamListGiven(const ApplyFusedEmaAdamListArgs& args, int list)
{
    return args.lists[list] != nullptr && !args.lists[list]->empty();
}

/** An optional list given as placeholders: every tensor without elements, of the placeholders'
 *  dtype (the state's, msRef's, for ssRef and maxVsRef; the parameters', varsRef's, for
 *  modelCopiesRef). Anything else is a list that holds values (a call of empty entries may pass
 *  real empty lists: the checks then treat them as given). */
bool IsPlaceholderList(const ApplyFusedEmaAdamListArgs& args, int list)
{
    if (!IsOptional(args, list) || !ApplyFusedEmaAdamListGiven(args, list)) return false;
    const int owner = list == kApplyFusedEmaAdamListCopies ? kApplyFusedEmaAdamListVars
                                                           : kApplyFusedEmaAdamListMs;
    if (List(args, owner).empty()) return false;
    return AllPlaceholders(*args.lists[list], List(args, owner)[0].dtype);
}

Refusal CheckLengths(const ApplyFusedEmaAdamListArgs& args)
{
    const size_t n = List(args, kApplyFusedEmaAdamListGrads).size();
    for (int list = kApplyFusedEmaAdamListVars; list < kApplyFusedEmaAdamListTensorLists; ++list) {
        const bool optional = IsOptional(args, list);
        if (optional && !ApplyFusedEmaAdamListGiven(args, list)) {
            continue;
        }
        const size_t size = List(args, list).size();
        if (size != n) return ListLengthRefusal(kNames[list], size, n, optional);
    }
    return {};
}

/** "expected varsRef's dtype ACL_FLOAT16 (1) or ACL_FLOAT (0)" for one of two allowed dtypes. */
Refusal ExpectOneOf(const NamedEntry& t, const char* ownerOfFirst, int32_t first,
                    const std::string& why)
{
    if (t.arg.dtype == first || t.arg.dtype == kFp32Code) {
        return {};
    }
    std::string expected = std::string(ownerOfFirst) + "'s dtype " + DescribeDtype(first);
    if (first != kFp32Code) {
        expected += " or " + DescribeDtype(kFp32Code);
    }
    return t.name + " has dtype " + DescribeDtype(t.arg.dtype) + ", expected " + expected + ": " +
           why;
}

/** The operator's dtype contract on the entries 0 (every list has one dtype, checked before). */
Refusal CheckDtypeContract(const ApplyFusedEmaAdamListArgs& args, ApplyFusedEmaAdamListDtypes* out)
{
    const auto entry0 = [&](int list) { return NamedEntry(list, 0, List(args, list)[0]); };
    const NamedEntry var = entry0(kApplyFusedEmaAdamListVars);
    if (Refusal r = CheckFloatDtype(var.arg); !r.empty()) return r;
    const NamedEntry m = entry0(kApplyFusedEmaAdamListMs);
    if (Refusal r = ExpectOneOf(m, "varsRef", var.arg.dtype,
                                "the state is stored in the parameters' dtype or in fp32");
        !r.empty()) {
        return r;
    }
    for (int list :
         {kApplyFusedEmaAdamListVs, kApplyFusedEmaAdamListSs, kApplyFusedEmaAdamListMaxVs}) {
        if (!ApplyFusedEmaAdamListPresent(args, list)) continue;
        if (Refusal r = CheckSameDtype(entry0(list).arg, m.arg, kStateGroup); !r.empty()) return r;
    }
    const bool hasCopy = ApplyFusedEmaAdamListPresent(args, kApplyFusedEmaAdamListCopies);
    int32_t gradPartner = var.arg.dtype;  // grads: the params' dtype or fp32 ...
    const char* gradPartnerName = "varsRef";
    if (hasCopy) {  // ... or, with model copies, the copies' dtype or fp32
        const NamedEntry copy = entry0(kApplyFusedEmaAdamListCopies);
        const DataTypeInfo* info = FindDataTypeByCode(copy.arg.dtype);
        if (info == nullptr || !info->isFloat || info->size != 2) {
            return copy.name + " has dtype " + DescribeDtype(copy.arg.dtype) + ", expected " +
                   CannDataTypeName(CannCodeOf(DataType::kFloat16)) + " or " +
                   CannDataTypeName(CannCodeOf(DataType::kBFloat16)) +
                   ": a model copy holds 16-bit weights";
        }
        if (var.arg.dtype != kFp32Code) {
            return var.name + " has dtype " + DescribeDtype(var.arg.dtype) + ", expected " +
                   DescribeDtype(kFp32Code) +
                   " with modelCopiesRef: varsRef holds the fp32 master weights of the "
                   "model copies";
        }
        gradPartner = copy.arg.dtype;
        gradPartnerName = "modelCopiesRef";
    }
    const NamedEntry grad = entry0(kApplyFusedEmaAdamListGrads);
    if (Refusal r = ExpectOneOf(grad, gradPartnerName, gradPartner,
                                hasCopy ? "the gradients of the model copies or fp32"
                                        : "the gradients have the parameters' dtype or fp32");
        !r.empty()) {
        return r;
    }
    const auto type = [](const NamedEntry& e) { return FindDataTypeByCode(e.arg.dtype)->type; };
    out->param = type(var);
    out->state = type(m);
    out->grad = type(grad);
    out->hasCopy = hasCopy;
    if (hasCopy) {
        out->copy = FindDataTypeByCode(gradPartner)->type;
    }
    return {};
}

Refusal CheckDtypes(const ApplyFusedEmaAdamListArgs& args, ApplyFusedEmaAdamListDtypes* out)
{
    if (Refusal r = CheckOneDtypePerList(args.lists, kNames, kApplyFusedEmaAdamListTensorLists);
        !r.empty()) {
        return r;
    }
    if (!List(args, kApplyFusedEmaAdamListGrads).empty()) {
        if (Refusal r = CheckDtypeContract(args, out); !r.empty()) return r;
    }
    if (Refusal r = CheckStepDtype(*args.step); !r.empty()) return r;
    for (const TensorArg* scalar : {args.gradScale, args.foundInf, args.lr, args.emaDecay}) {
        if (scalar == nullptr) continue;
        if (Refusal r = CheckDtypeIs(*scalar, DataType::kFloat32); !r.empty()) return r;
    }
    return {};
}

Refusal CheckShapes(const ApplyFusedEmaAdamListArgs& args)
{
    const std::vector<ListEntryArg>& grads = List(args, kApplyFusedEmaAdamListGrads);
    for (size_t i = 0; i < grads.size(); ++i) {
        const std::vector<int64_t>& shape = *grads[i].shape;
        if (shape.size() > kApplyFusedEmaAdamListMaxRank) {
            const NamedEntry g(kApplyFusedEmaAdamListGrads, i, grads[i]);
            return g.name + " has shape " + ShapeToString(shape) + " (rank " +
                   std::to_string(shape.size()) + "), expected at most " +
                   std::to_string(kApplyFusedEmaAdamListMaxRank) + " dimensions";
        }
        for (int list = kApplyFusedEmaAdamListVars; list < kApplyFusedEmaAdamListTensorLists;
             ++list) {
            if (!ApplyFusedEmaAdamListPresent(args, list)) continue;
            const ListEntryArg& e = List(args, list)[i];
            if (*e.shape != shape) {
                const NamedEntry t(list, i, e);
                const NamedEntry g(kApplyFusedEmaAdamListGrads, i, grads[i]);
                const std::string group = "the tensors of entry " + std::to_string(i);
                return CheckSameShape(t.arg, g.arg, group.c_str());
            }
        }
    }
    for (const TensorArg* scalar :
         {args.step, args.gradScale, args.foundInf, args.lr, args.emaDecay}) {
        if (scalar == nullptr) continue;
        if (Refusal r = CheckOneElement(*scalar); !r.empty()) return r;
    }
    return {};
}

}  // namespace

std::string ApplyFusedEmaAdamListEntryName(int list, size_t index)
{
    return EntryName(kNames[list], index);
}

bool ApplyFusedEmaAdamListPresent(const ApplyFusedEmaAdamListArgs& args, int list)
{
    return ApplyFusedEmaAdamListGiven(args, list) && !IsPlaceholderList(args, list);
}

Refusal CheckApplyFusedEmaAdamList(const ApplyFusedEmaAdamListArgs& args,
                                   const ApplyFusedEmaAdamListAttrs& attrs,
                                   ApplyFusedEmaAdamListDtypes* dtypes,
                                   ApplyFusedEmaAdamListOptions* options)
{
    ApplyFusedEmaAdamListDtypes d{DataType::kFloat32, DataType::kFloat32,
                                  DataType::kFloat32};  // empty lists
    Refusal refusal = CheckLengths(args);
    if (refusal.empty()) refusal = CheckDtypes(args, &d);
    if (refusal.empty()) refusal = CheckShapes(args);
    if (refusal.empty()) refusal = CheckAttrs(attrs);
    if (refusal.empty()) {
        *dtypes = d;
        options->amsgrad = ApplyFusedEmaAdamListPresent(args, kApplyFusedEmaAdamListMaxVs);
        options->gradScale = args.gradScale != nullptr;
        options->foundInf = args.foundInf != nullptr;
        options->ema = ApplyFusedEmaAdamListPresent(args, kApplyFusedEmaAdamListSs);
        options->lrTensor = args.lr != nullptr;
        options->emaDecayTensor = args.emaDecay != nullptr;
    }
    return refusal;
}

Refusal CheckApplyFusedEmaAdamListFlat(const ApplyFusedEmaAdamListArgs& args)
{
    for (int list = kApplyFusedEmaAdamListGrads; list < kApplyFusedEmaAdamListTensorLists; ++list) {
        const std::vector<ListEntryArg>& entries = List(args, list);
        for (size_t i = 0; i < entries.size(); ++i) {
            if (entries[i].shape->size() != 1) {
                const NamedEntry t(list, i, entries[i]);
                return t.name + " has shape " + ShapeToString(*entries[i].shape) +
                       ", expected a 1-D tensor: on the NPU every tensor of the lists is 1-D "
                       "(the torch op passes flattened views), because the device's list decoder "
                       "reads every shape of a list with the rank of the list's first tensor";
            }
        }
    }
    return {};
}

}  // namespace ascend_ema_adam::apply_fused_ema_adam_list
