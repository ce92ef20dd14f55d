/* The public headers are plain C, and a C program can drive both phases. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "acl/acl.h"
#include "aclnn/opdev/op_errno.h"
#include "aclnnop/aclnn_apply_fused_ema_adam.h"
#include "aclnnop/aclnn_apply_fused_ema_adam_list.h"

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
    Check(aclrtResetDevice(0) == ACL_SUCCESS && aclFinalize() == ACL_SUCCESS, "finalize");
    return g_failed == 0 ? 0 : 1;
}
