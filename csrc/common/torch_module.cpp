/**
 * @file torch_module.cpp
 * @brief ascend_ema_adam._C: importing it registers the torch ops (static TORCH_LIBRARY
 *        initialisers in the linked kernel files); it also reports how it was built, and binds
 *        the optimizer's per-step checks of a cached group (optimizer_checks.cpp).
 */
#include <pybind11/pybind11.h>
#include <torch/csrc/utils/pybind.h>

#include <cstdint>
#include <string>

#include "cpu_op_api.h"
#include "module_registry.h"
#include "optimizer_checks.h"
#include "platform.h"

namespace py = pybind11;

PYBIND11_MODULE(_C, mod)
{
    mod.doc() = "ascend_ema_adam torch ops (ascend_ema_adam::apply_fused_ema_adam_, ...)";
    mod.def("build_info", [] {
        const ascend_ema_adam::Platform cpu = ascend_ema_adam::CpuPlatform();
        py::dict d;
        d["npu_kernel"] = AEA_WITH_NPU != 0;
        d["compiler"] = __VERSION__;
        d["cxx11_abi"] = _GLIBCXX_USE_CXX11_ABI != 0;
        d["cpu_threads"] = cpu.vectorCoreNum;
        d["cpu_ub_bytes"] = cpu.ubSize;
        return d;
    }, "How this extension was built and the CPU device it runs on.");
    mod.def("cpu_threads", [] {
        const ascend_ema_adam::ops::CpuThreadsInUse threads = ascend_ema_adam::ops::CpuThreads();
        py::dict d;
        d["next"] = threads.next;
        d["last"] = threads.last;
        d["pool"] = threads.pool;
        return d;
    }, "Threads the CPU device's kernels use for the next launch (ASCEND_EMA_ADAM_NUM_THREADS, "
       "else torch.get_num_threads(), at most the CPUs), used for the last one, and whose they "
       "are ('torch': torch's intra-op threads; 'own': the device's pool, "
       "ASCEND_EMA_ADAM_THREAD_POOL=own).");
    mod.def("cpu_8bit_path", &ascend_ema_adam::ops::CpuAdam8bitPath,
            "How the CPU device's 8-bit kernel looks codes up, as a launch now would "
            "(aeaGetCpuAdam8bitPath), e.g. 'avx512, decode by byte planes, encode by table "
            "(measured)'.");
    ascend_ema_adam::ops::BindOptimizerChecks(mod);
    ascend_ema_adam::module_registry::BindRegistered(mod, "_C");
}
