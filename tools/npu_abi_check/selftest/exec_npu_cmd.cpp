/**
 * @file exec_npu_cmd.cpp
 * @brief Self-test of tools/npu_abi_check/abi_check.py: an aclnn launch written with op-plugin's
 *        EXEC_NPU_CMD, as the NPU kernels were before the check. Its inline code needs about 27
 *        internals libtorch_npu.so does not export (g_hash_buf, calc_hash_id, ...): the check
 *        must refuse this object (an extension built from it links, then fails to import).
 */
#include "op_plugin/utils/op_api_common.h"

void ZeroWithExecNpuCmd(const at::Tensor& self)
{
    EXEC_NPU_CMD(aclnnInplaceZero, self);
}
