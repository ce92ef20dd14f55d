/**
 * @file hccl_standin.cpp
 * @brief libhccl.so for the torch-npu run (tools/torch_npu_run): one process, one device, no
 *        collectives. What torch_npu calls without a process group (HcclSetConfig, at device init
 *        and for the deterministic setting) succeeds; every communicator function aborts, naming
 *        itself (gen_cann_absent.py). Defined against CANN's own declarations (the wheel's
 *        hccl/hccl.h).
 */
#include "hccl/hccl.h"

#define STANDIN extern "C" __attribute__((visibility("default")))

STANDIN HcclResult HcclSetConfig(HcclConfig, HcclConfigValue)
{
    return HCCL_SUCCESS;
}
