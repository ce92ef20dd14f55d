/* The public headers are plain C, and a C program can drive both phases, with the list
 * operator's contract (CANN's generated aclnn and opbase): a NULL list is refused (161001), an
 * unused optional list is an empty one, a list of more than 256 tensors is refused (161002) and
 * nothing is written. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_apply_fused_ema_adam.h"
#include "aclnnop/aclnn_apply_fused_ema_adam_list.h"
#include "aclnnop/aclnn_apply_fused_ema_adam_list_v2.h"

static int g_failed = 0;

static void Check(int ok, const char* what)
{
    printf("%-56s %s\n", what, ok ? "ok" : "FAILED");
    g_failed += !ok;
}

static aclTensor* Vector(void* data, int64_t n, aclDataType dtype)
{
    const int64_t shape[1] = {n};
    const int64_t stride[1] = {1};
    return aclCreateTensor(shape, 1, dtype, stride, 0, ACL_FORMAT_ND, shape, 1, data);
}

/* One list of `n` tensors of 2 floats each over data[0 .. 2n). */
static aclTensorList* ListOf(float* data, int n)
{
    static const aclTensor* handles[300];
    int i;
    for (i = 0; i < n; ++i) {
        handles[i] = Vector(data + 2 * i, 2, ACL_FLOAT);
    }
    return aclCreateTensorList(handles, (uint64_t)n);
}

/* The list operator: V1 and V2 phase 1 with `n` entries; maxVsRef and modelCopiesRef are empty
 * lists (V2: and ssRef too, when noEma), or NULL when nullLists. Returns phase 1's status; on
 * success runs phase 2. *changed tells whether any parameter changed. */
static aclnnStatus ListCall(int n, int v2, int noEma, int nullLists, int* changed)
{
    static float grads[600], vars[600], ms[600], vs[600], ss[600], varsBefore[600];
    int64_t step = 2;
    aclTensor* stepTensor = Vector(&step, 1, ACL_INT64);
    aclTensorList* lists[7];
    uint64_t workspaceSize = 12345;
    aclOpExecutor* executor = NULL;
    aclnnStatus status;
    int i;
    for (i = 0; i < 2 * n; ++i) {
        grads[i] = 0.01f * (float)(i % 7) - 0.02f;
        vars[i] = ss[i] = varsBefore[i] = 0.5f - 0.001f * (float)i;
        ms[i] = 0.001f;
        vs[i] = 0.0001f;
    }
    lists[0] = ListOf(grads, n);
    lists[1] = ListOf(vars, n);
    lists[2] = ListOf(ms, n);
    lists[3] = ListOf(vs, n);
    lists[4] = noEma ? aclCreateTensorList(NULL, 0) : ListOf(ss, n);
    lists[5] = nullLists ? NULL : aclCreateTensorList(NULL, 0);
    lists[6] = nullLists ? NULL : aclCreateTensorList(NULL, 0);
    if (v2) {
        status = aclnnApplyFusedEmaAdamListV2GetWorkspaceSize(
            lists[0], lists[1], lists[2], lists[3], lists[4], lists[5], lists[6], stepTensor, NULL,
            NULL, NULL, NULL, 1e-3, 0.99, 0.9, 0.999, 1e-8, 1, true, 0.01, false, &workspaceSize,
            &executor);
    } else {
        status = aclnnApplyFusedEmaAdamListGetWorkspaceSize(
            lists[0], lists[1], lists[2], lists[3], lists[4], lists[5], lists[6], stepTensor, NULL,
            NULL, 1e-3, 0.99, 0.9, 0.999, 1e-8, 1, true, 0.01, false, &workspaceSize, &executor);
    }
    if (status == ACLNN_SUCCESS) {
        status = v2 ? aclnnApplyFusedEmaAdamListV2(NULL, 0, executor, NULL)
                    : aclnnApplyFusedEmaAdamList(NULL, 0, executor, NULL);
    } else if (workspaceSize != 12345 || executor != NULL) {
        status = -1; /* a refusal must leave the out-arguments unwritten */
    }
    *changed = 0;
    for (i = 0; i < 2 * n; ++i) {
        *changed = *changed || vars[i] != varsBefore[i];
    }
    for (i = 0; i < 7; ++i) {
        if (lists[i] != NULL) aclDestroyTensorList(lists[i]);
    }
    aclDestroyTensor(stepTensor);
    return status;
}

static void CheckLists(void)
{
    int changed = 0;
    aclnnStatus status;
    const char* message;
    int v2;
    for (v2 = 0; v2 <= 1; ++v2) {
        status = ListCall(3, v2, 0, 1, &changed);
        message = aclGetRecentErrMsg();
        Check(status == ACLNN_ERR_PARAM_NULLPTR && !changed && message != NULL &&
                  strstr(message, "maxVsRef is null") != NULL,
              v2 ? "V2: a NULL list: ACLNN_ERR_PARAM_NULLPTR" : "a NULL list: ACLNN_ERR_PARAM_NULLPTR");
        status = ListCall(3, v2, 0, 0, &changed);
        Check(status == ACLNN_SUCCESS && changed,
              v2 ? "V2: empty maxVsRef, modelCopiesRef: absent" : "empty maxVsRef, modelCopiesRef: absent");
        status = ListCall(256, v2, 0, 0, &changed);
        Check(status == ACLNN_SUCCESS && changed, v2 ? "V2: 256 tensors per list" : "256 tensors per list");
        status = ListCall(257, v2, 0, 0, &changed);
        message = aclGetRecentErrMsg();
        Check(status == ACLNN_ERR_PARAM_INVALID && !changed && message != NULL &&
                  strstr(message, "grads holds 257 tensors") != NULL,
              v2 ? "V2: 257 tensors: ACLNN_ERR_PARAM_INVALID, nothing written"
                 : "257 tensors: ACLNN_ERR_PARAM_INVALID, nothing written");
    }
    status = ListCall(4, 1, 1, 0, &changed);
    Check(status == ACLNN_SUCCESS && changed, "V2: an empty ssRef: no EMA");
    status = ListCall(4, 0, 1, 0, &changed);
    aclGetRecentErrMsg();
    Check(status == ACLNN_ERR_PARAM_INVALID && !changed, "V1: an empty ssRef is refused");
}

int main(void)
{
    float grad[5] = {0.1f, -0.2f, 0.3f, -0.4f, 0.5f};
    float var[5] = {1.0f, 2.0f, -1.0f, 0.5f, -0.25f};
    float m[5] = {0.0f, 0.01f, -0.02f, 0.03f, 0.0f};
    float v[5] = {0.0f, 0.001f, 0.002f, 0.0f, 0.004f};
    float s[5];
    float varBefore[5];
    int64_t step = 3;
    aclTensor* t[6];
    uint64_t workspaceSize = 0;
    aclOpExecutor* executor = NULL;
    aclnnStatus status;
    const char* message;
    int updated;
    int i;

    memcpy(s, var, sizeof(var));
    memcpy(varBefore, var, sizeof(var));
    Check(aclInit(NULL) == ACL_SUCCESS && aclrtSetDevice(0) == ACL_SUCCESS, "init");
    t[0] = Vector(grad, 5, ACL_FLOAT);
    t[1] = Vector(var, 5, ACL_FLOAT);
    t[2] = Vector(m, 5, ACL_FLOAT);
    t[3] = Vector(v, 5, ACL_FLOAT);
    t[4] = Vector(s, 5, ACL_FLOAT);
    t[5] = Vector(&step, 1, ACL_INT64);

    status = aclnnApplyFusedEmaAdamGetWorkspaceSize(NULL, t[1], t[2], t[3], t[4], t[5], 1e-3, 0.99,
                                                    0.9, 0.999, 1e-8, 1, true, 0.01,
                                                    &workspaceSize, &executor);
    message = aclGetRecentErrMsg();
    Check(status == ACLNN_ERR_PARAM_NULLPTR && message != NULL &&
              strstr(message, "grad is null") != NULL,
          "null grad: ACLNN_ERR_PARAM_NULLPTR");

    status = aclnnApplyFusedEmaAdamGetWorkspaceSize(t[0], t[1], t[2], t[3], t[4], t[5], 1e-3, 0.99,
                                                    0.9, 0.999, 1e-8, 1, true, 0.01,
                                                    &workspaceSize, &executor);
    Check(status == ACLNN_SUCCESS && workspaceSize == 0 && executor != NULL, "phase 1");
    Check(aclnnApplyFusedEmaAdam(NULL, 0, executor, NULL) == ACLNN_SUCCESS, "phase 2");
    updated = 1;
    for (i = 0; i < 5; ++i) {
        updated = updated && var[i] != varBefore[i] && s[i] != varBefore[i];
    }
    Check(updated, "var and s updated in place");
    Check(aclnnApplyFusedEmaAdam(NULL, 0, executor, NULL) == ACLNN_ERR_PARAM_INVALID,
          "second run: ACLNN_ERR_PARAM_INVALID");
    aclGetRecentErrMsg();

    for (i = 0; i < 6; ++i) {
        aclDestroyTensor(t[i]);
    }
    CheckLists();
    Check(aclrtResetDevice(0) == ACL_SUCCESS && aclFinalize() == ACL_SUCCESS, "finalize");
    return g_failed == 0 ? 0 : 1;
}
