/**
 * @file acl_executor_reuse.cpp
 * @brief Repeatable executors and address updates, with the contract of CANN's opbase
 *        (nnopbase acl_op_api.cpp, individual_op_api.cpp): aclSetAclOpExecutorRepeatable keeps an
 *        executor for any number of phase 2s, and aclSet*TensorAddr point one of its tensors at
 *        new memory of the same description, so a caller whose tensors moved skips phase 1.
 *
 * What phase 1 checked of a tensor (dtype, shape, strides, format, the memory rules) is not
 * checked again, as on the device: the caller answers for the new memory being a valid place for
 * the same view. Each call first sets the aclTensor's storage address (aclSetRawTensorAddr), then
 * the executor's copy, looking the tensor up by (irIndex, relativeIndex) with irIndex counted as
 * opbase counts it (OpDef order, an absent OPTIONAL input skipped). The status codes are opbase's:
 * a null tensor, list entry or executor 561103, an index out of range 161002, a pointer that is
 * not a live executor 561000.
 */
#include <string>
#include <vector>

#include "acl_internal.h"

namespace ascend_ema_adam::acl {
namespace {

aclnnStatus Refuse(const char* api, aclnnStatus status, const std::string& message)
{
    AddErrorMessage(std::string(api) + ": " + message);
    return status;
}

/** Where flat tensor `index` of the inputs (outputs) is: its irIndex and relativeIndex, the way
 *  opbase numbers an operator's tensors (each input's instances in order). */
bool FlatToIr(const std::vector<size_t>& instances, size_t index, size_t* irIndex,
              size_t* relativeIndex)
{
    for (size_t ir = 0; ir < instances.size(); ++ir) {
        if (index < instances[ir]) {
            *irIndex = ir;
            *relativeIndex = index;
            return true;
        }
        index -= instances[ir];
    }
    return false;
}

enum class Side { kInput, kOutput, kEither };  // kEither: irIndex over the inputs, then outputs

/** The executor's part of every aclSet*TensorAddr: `tensor` already holds its new address. */
aclnnStatus SetExecutorAddress(const char* api, aclOpExecutor* executor, Side side,
                               bool flatIndex, size_t index, size_t relativeIndex,
                               const aclTensor* tensor)
{
    if (executor == nullptr) return Refuse(api, ACLNN_ERR_INNER_NULLPTR, "executor is null");
    aclnnStatus status = ACLNN_SUCCESS;
    std::string message;
    const bool live = WithLiveExecutor(executor, [&](aclOpExecutor& e) {
        bool input = side != Side::kOutput;
        size_t ir = index;
        size_t rel = relativeIndex;
        const std::vector<size_t>& inputs = e.inputInstances;
        if (side == Side::kEither && ir >= inputs.size()) {
            input = false;
            ir -= inputs.size();
        }
        const std::vector<size_t>& instances = input ? inputs : e.outputInstances;
        const char* what = input ? "input" : "output";
        if (flatIndex) {
            if (!FlatToIr(instances, index, &ir, &rel)) {
                status = ACLNN_ERR_PARAM_INVALID;
                message = "index " + std::to_string(index) + " is past the executor's " + what +
                          " tensors";
                return;
            }
        } else if (ir >= instances.size()) {
            status = ACLNN_ERR_PARAM_INVALID;
            message = "irIndex " + std::to_string(index) + " is past the " +
                      std::to_string(instances.size()) + " " + what + "s of " + e.op.type;
            return;
        } else if (rel >= instances[ir]) {
            status = ACLNN_ERR_PARAM_INVALID;
            message = "relativeIndex " + std::to_string(rel) + " is past the " +
                      std::to_string(instances[ir]) + " tensors of " + what + " " +
                      std::to_string(ir) + " of " + e.op.type;
            return;
        }
        if (!e.SetAddress(input, ir, rel, tensor)) {
            status = ACLNN_ERR_PARAM_INVALID;
            message = std::string("a null address for ") + what + " " + std::to_string(ir) +
                      " tensor " + std::to_string(rel) + ", which has elements";
        }
    });
    if (!live) {
        return Refuse(api, ACLNN_ERR_INNER,
                      "executor is not a live executor (already run without "
                      "aclSetAclOpExecutorRepeatable, destroyed, or freed by aclFinalize)");
    }
    return status == ACLNN_SUCCESS ? status : Refuse(api, status, message);
}

aclnnStatus SetTensorAddress(const char* api, aclOpExecutor* executor, Side side, size_t index,
                             aclTensor* tensor, void* addr)
{
    if (tensor == nullptr) return Refuse(api, ACLNN_ERR_INNER_NULLPTR, "tensor is null");
    if (!IsLiveTensor(tensor)) return Refuse(api, ACLNN_ERR_PARAM_INVALID, "tensor is not live");
    tensor->data = addr;
    return SetExecutorAddress(api, executor, side, true, index, 0, tensor);
}

aclnnStatus SetListAddress(const char* api, aclOpExecutor* executor, Side side, size_t irIndex,
                           size_t relativeIndex, aclTensorList* tensors, void* addr)
{
    if (tensors == nullptr) return Refuse(api, ACLNN_ERR_INNER_NULLPTR, "tensors is null");
    if (!IsLiveTensorList(tensors)) {
        return Refuse(api, ACLNN_ERR_PARAM_INVALID, "tensors is not a live aclTensorList");
    }
    if (relativeIndex >= tensors->tensors.size()) {
        return Refuse(api, ACLNN_ERR_PARAM_INVALID,
                      "relativeIndex " + std::to_string(relativeIndex) + " is out of the list's " +
                          std::to_string(tensors->tensors.size()) + " tensors");
    }
    aclTensor* tensor = const_cast<aclTensor*>(tensors->tensors[relativeIndex]);
    if (tensor == nullptr) {
        return Refuse(api, ACLNN_ERR_INNER_NULLPTR,
                      "entry " + std::to_string(relativeIndex) + " of tensors is null");
    }
    tensor->data = addr;
    return SetExecutorAddress(api, executor, side, false, irIndex, relativeIndex, tensor);
}

}  // namespace
}  // namespace ascend_ema_adam::acl

using namespace ascend_ema_adam::acl;

extern "C" {

aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor* executor)
{
    const char* api = "aclSetAclOpExecutorRepeatable";
    if (executor == nullptr) return Refuse(api, ACLNN_ERR_INNER_NULLPTR, "executor is null");
    if (!WithLiveExecutor(executor, [](aclOpExecutor& e) { e.repeatable = true; })) {
        return Refuse(api, ACLNN_ERR_INNER,
                      "executor is not a live executor (already run, destroyed, freed by "
                      "aclFinalize, or never returned by phase 1)");
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclSetRawTensorAddr(aclTensor* tensor, void* addr)
{
    if (tensor == nullptr) {
        return Refuse("aclSetRawTensorAddr", ACLNN_ERR_PARAM_NULLPTR, "tensor is null");
    }
    tensor->data = addr;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetRawTensorAddr(const aclTensor* tensor, void** addr)
{
    const char* api = "aclGetRawTensorAddr";
    if (tensor == nullptr) return Refuse(api, ACLNN_ERR_PARAM_NULLPTR, "tensor is null");
    if (addr == nullptr) return Refuse(api, ACLNN_ERR_PARAM_NULLPTR, "addr is null");
    *addr = tensor->data;
    return ACLNN_SUCCESS;
}

aclnnStatus aclSetInputTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor,
                                  void* addr)
{
    return SetTensorAddress("aclSetInputTensorAddr", executor, Side::kInput, index, tensor, addr);
}

aclnnStatus aclSetOutputTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor,
                                   void* addr)
{
    return SetTensorAddress("aclSetOutputTensorAddr", executor, Side::kOutput, index, tensor, addr);
}

aclnnStatus aclSetTensorAddr(aclOpExecutor* executor, const size_t index, aclTensor* tensor,
                             void* addr)
{
    // opbase's aclSetTensorAddr takes a flat index over the inputs' tensors, then the outputs'.
    const char* api = "aclSetTensorAddr";
    if (tensor == nullptr) return Refuse(api, ACLNN_ERR_INNER_NULLPTR, "tensor is null");
    if (executor == nullptr) return Refuse(api, ACLNN_ERR_INNER_NULLPTR, "executor is null");
    size_t inputs = 0;
    if (!WithLiveExecutor(executor, [&](aclOpExecutor& e) {
            for (size_t n : e.inputInstances) inputs += n;
        })) {
        return Refuse(api, ACLNN_ERR_INNER, "executor is not a live executor");
    }
    return index < inputs
               ? SetTensorAddress(api, executor, Side::kInput, index, tensor, addr)
               : SetTensorAddress(api, executor, Side::kOutput, index - inputs, tensor, addr);
}

aclnnStatus aclSetDynamicInputTensorAddr(aclOpExecutor* executor, size_t irIndex,
                                         const size_t relativeIndex, aclTensorList* tensors,
                                         void* addr)
{
    return SetListAddress("aclSetDynamicInputTensorAddr", executor, Side::kInput, irIndex,
                          relativeIndex, tensors, addr);
}

aclnnStatus aclSetDynamicOutputTensorAddr(aclOpExecutor* executor, size_t irIndex,
                                          const size_t relativeIndex, aclTensorList* tensors,
                                          void* addr)
{
    return SetListAddress("aclSetDynamicOutputTensorAddr", executor, Side::kOutput, irIndex,
                          relativeIndex, tensors, addr);
}

aclnnStatus aclSetDynamicTensorAddr(aclOpExecutor* executor, size_t irIndex,
                                    const size_t relativeIndex, aclTensorList* tensors, void* addr)
{
    return SetListAddress("aclSetDynamicTensorAddr", executor, Side::kEither, irIndex,
                          relativeIndex, tensors, addr);
}

}  // extern "C"
