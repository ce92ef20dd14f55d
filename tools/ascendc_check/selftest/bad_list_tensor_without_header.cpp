// ascendc-check: expect-error ‘ListTensorDesc’ is not a member of ‘AscendC’
// Rig self-test: kernel_operator.h does not bring ListTensorDesc; a list kernel includes
// "kernel_operator_list_tensor_intf.h" itself (as the ListTensorDesc documentation says).
#include "kernel_operator.h"

extern "C" __global__ __aicore__ void list_count(GM_ADDR xList)
{
    AscendC::ListTensorDesc list(reinterpret_cast<__gm__ void*>(xList));
    (void)list.GetSize();
}
