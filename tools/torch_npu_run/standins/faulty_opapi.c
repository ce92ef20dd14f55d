/*
 * A fault injector for the torch-npu run (cases.py, "a failed queued address update"): a custom
 * operator package library, placed first on ASCEND_CUSTOM_OPP_PATH, whose
 * aclSetDynamicInputTensorAddr fails on its AEA_FAULTY_SET_ADDR_AT-th call (1-based) and otherwise
 * forwards to nnopbase's. Everything else op-plugin looks up in it (the generated aclnn, the
 * other setters) is found in the real package's library it needs (libcust_opapi.so on
 * LD_LIBRARY_PATH). Built as libcust_opapi.so in a folder of its own, with another SONAME.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct aclOpExecutor aclOpExecutor;
typedef struct aclTensorList aclTensorList;
typedef int32_t (*SetDynamicInputTensorAddr)(aclOpExecutor*, size_t, size_t, aclTensorList*, void*);

static long g_calls;

__attribute__((visibility("default"))) int32_t aclSetDynamicInputTensorAddr(
    aclOpExecutor* executor, size_t irIndex, size_t relativeIndex, aclTensorList* tensors,
    void* addr)
{
    static SetDynamicInputTensorAddr real;
    if (real == NULL) {
        real = (SetDynamicInputTensorAddr)dlsym(RTLD_NEXT, "aclSetDynamicInputTensorAddr");
    }
    const char* at = getenv("AEA_FAULTY_SET_ADDR_AT");
    if (at != NULL && ++g_calls == atol(at)) {
        return 161002; /* ACLNN_ERR_PARAM_INVALID, as opbase refuses a bad update */
    }
    return real(executor, irIndex, relativeIndex, tensors, addr);
}
