// Must NOT compile: as in the real asc-devkit, kernel_operator.h does not declare ListTensorDesc;
// a list kernel includes kernel_operator_list_tensor_intf.h (ctest matches the compiler's error).
#include "kernel_operator.h"

AscendC::ListTensorDesc g_list;
