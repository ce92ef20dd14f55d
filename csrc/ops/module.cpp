/**
 * @file module.cpp
 * @brief ascend_ema_adam._C: importing it registers the torch ops (static TORCH_LIBRARY
 *        initialisers in the linked kernel files); it also reports how it was built, and binds
 *        the optimizer's per-step checks of a cached group (optimizer_checks.cpp).
 */
#include <pybind11/pybind11.h>
#include <torch/csrc/utils/pybind.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cpu_op_api.h"
#include "op_bindings.h"
#include "optimizer_checks.h"
#include "platform.h"

namespace py = pybind11;

namespace ascend_ema_adam::ops {

namespace {

std::vector<std::pair<const char*, BindFn>>& Registry()
{
    static std::vector<std::pair<const char*, BindFn>> registry;
    return registry;
}

}  // namespace

OpBindingsRegistration::OpBindingsRegistration(const char* op, BindFn bind)
{
    Registry().emplace_back(op, bind);
}

void BindAllOps(py::module_& mod)
{
    for (const auto& [op, bind] : Registry()) {
        // Each operator only adds names: pybind11 would make a name defined again an overload of
        // the first, so a name two operators bind is refused here, naming the second.
        const py::dict before = mod.attr("__dict__").attr("copy")();
        bind(mod);
        const py::dict after = mod.attr("__dict__");
        for (const auto& [name, value] : before) {
            if (after[name].ptr() != value.ptr()) {
                throw std::runtime_error(std::string("_C: the bindings of ") + op + " define " +
                                         py::str(name).cast<std::string>() +
                                         ", which is already defined");
            }
        }
    }
}

}  // namespace ascend_ema_adam::ops

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
    ascend_ema_adam::ops::BindAllOps(mod);
}
