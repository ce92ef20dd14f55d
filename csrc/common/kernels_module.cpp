/**
 * @file kernels_module.cpp
 * @brief The _kernels module (numpy level, no torch): what every operator shares (platforms, the
 *        attributes, the dtype table, the CPU device's kernel choice, the native thread pool, the
 *        kernels' scalar code, the benchmark's bandwidth probes), then each operator's bindings
 *        (csrc/ops/<op>/<op>_kernels_bindings.cpp, registered with AEA_KERNELS_BINDINGS).
 */
#include <string>
#include <vector>

#include "cpu_kernel.h"
#include "ema_adam_attrs.h"
#include "kernel_scalar_host.h"
#include "module_registry.h"
#include "native_stream_probe.h"
#include "native_thread_pool.h"
#include "platform.h"
#include "kernels_bindings.h"

namespace {

using namespace ascend_ema_adam::kernels_bindings;

aea::StreamProbe ParseProbe(const std::string& kind)
{
    if (kind == "copy") return aea::StreamProbe::kCopy;
    if (kind == "copy_nt") return aea::StreamProbe::kCopyNt;
    if (kind == "triad") return aea::StreamProbe::kTriad;
    if (kind == "triad_nt") return aea::StreamProbe::kTriadNt;
    if (kind == "update") return aea::StreamProbe::kUpdate;
    if (kind == "update8bit") return aea::StreamProbe::kUpdate8bit;
    throw py::value_error("kind must be copy, copy_nt, triad, triad_nt, update or update8bit, "
                          "got '" + kind + "'");
}

}  // namespace

PYBIND11_MODULE(_kernels, mod)
{
    mod.doc() =
        "ApplyFusedEmaAdam's operators: host tiling and the AscendC kernels on the CPU twin";

    mod.def("platforms", [] {
        py::list out;
        for (const aea::Platform& p : aea::PlatformPresets()) {
            py::dict d;
            d["name"] = p.name;
            d["vector_core_num"] = p.vectorCoreNum;
            d["ub_size"] = p.ubSize;
            d["hbm_gbps"] = p.hbmGBps;
            out.append(d);
        }
        return out;
    }, "Platform presets (name, vector cores, UB bytes per core, nominal HBM GB/s).");

    py::class_<aea::Attrs>(mod, "Attrs",
                           "The operator's attributes, set by name (CANN's defaults).")
        .def(py::init<>())
        .def_readwrite("lr", &aea::Attrs::lr)
        .def_readwrite("ema_decay", &aea::Attrs::emaDecay)
        .def_readwrite("beta1", &aea::Attrs::beta1)
        .def_readwrite("beta2", &aea::Attrs::beta2)
        .def_readwrite("eps", &aea::Attrs::eps)
        .def_readwrite("mode", &aea::Attrs::mode)
        .def_readwrite("bias_correction", &aea::Attrs::biasCorrection)
        .def_readwrite("weight_decay", &aea::Attrs::weightDecay);

    mod.def("data_types", [] {
        py::list out;
        for (const aea::DataTypeInfo& info : aea::kDataTypes) {
            py::dict d;
            d["name"] = info.name;
            d["size"] = info.size;
            d["cann_code"] = info.cannCode;
            d["is_float"] = info.isFloat;
            out.append(d);
        }
        return out;
    }, "The C++ dtype table (op_host/common/data_type.h): name, size, CANN code, float or not.");

    mod.def("native_pool_launches", [] { return aea::native::ThreadPool::Get().Launches(); },
            "Launches of the native kernels' thread pool so far (one per parallel kernel call).");

    mod.def(
        "native_wakes",
        [](uint64_t n) { return aea::NativeWakes(n, aea::kNativeMinElemsPerThread); }, py::arg("n"),
        "Whether a native launch of n elements, started now on this thread, wakes sleeping "
        "pool workers (alone or in a burst of this thread's launches); counts it in the burst.");

    mod.def("native_bias_correction", [](float beta, int64_t step) {
        return aea::BiasCorrection(beta, step);
    }, py::arg("beta"), py::arg("step"),
    "c = 1 - beta^step in fp32: the kernel's own BiasCorrection, compiled for the host.");

    mod.def("cpu_kernel", [] {
        py::dict d;
        try {
            d["kernel"] = aea::SelectedCpuKernel() == aea::CpuKernel::kTwin ? "twin" : "native";
            d["threads"] = aea::NativeThreads();
            d["isa"] = aea::NativeIsa();
        } catch (const std::invalid_argument& e) {
            throw py::value_error(e.what());
        }
        return d;
    }, "The CPU device's kernel as the environment selects it now: kernel ('native' or 'twin', "
       "from ASCEND_EMA_ADAM_CPU_KERNEL), the native kernel's instruction set and default threads "
       "(ASCEND_EMA_ADAM_NUM_THREADS, else every CPU of the process).");

    mod.def("cpu_kernel_name", [] {
        try {
            if (aea::SelectedCpuKernel() == aea::CpuKernel::kTwin) {
                return std::string("twin (the AscendC kernel on the CPU twin)");
            }
            return "native (" + std::string(aea::NativeIsa()) + ", " +
                   std::to_string(aea::NativeThreads()) + " threads)";
        } catch (const std::invalid_argument& e) {
            return std::string("none: ") + e.what();
        }
    }, "cpu_kernel() in one line, for `info` (an invalid environment is described, not raised).");

    mod.def("stream_probe",
            [](const std::string& kind, const std::vector<py::buffer>& arrays, float scalar,
               uint64_t n, uint32_t threads) {
                const aea::StreamProbe k = ParseProbe(kind);
                if (arrays.size() != static_cast<size_t>(aea::StreamProbeArrays(k))) {
                    throw py::value_error(kind + " needs " +
                                          std::to_string(aea::StreamProbeArrays(k)) + " arrays");
                }
                std::vector<float*> ptrs;
                for (size_t i = 0; i < arrays.size(); ++i) {
                    const std::string name = "arrays[" + std::to_string(i) + "]";
                    const auto bytes = static_cast<uint64_t>(
                        aea::StreamProbeElementBytes(k, static_cast<int>(i)));
                    ptrs.push_back(static_cast<float*>(
                        BufferPtr(arrays[i], name.c_str(), n * bytes, true)));
                }
                py::gil_scoped_release release;
                return aea::RunStreamProbe(k, ptrs.data(), scalar, n, threads);
            },
            py::arg("kind"), py::arg("arrays"), py::arg("scalar"), py::arg("n"),
            py::arg("threads") = 0,
            "Streaming-bandwidth probe on float32 buffers of n elements, split over threads like "
            "the native kernel: copy (a0 = a1; 8 B/elem), triad (a0 = a1 + scalar*a2; 12 B/elem), "
            "their _nt variants storing around the caches; update (ak += a0 for k = 1..4 in "
            "place: the kernel's 36 B/elem pattern); update8bit (a1 += a0, a2 += a1 in place, and "
            "a3, a4 of n bytes holding normal floats read and written in place: the 8-bit "
            "kernel's 24 B/elem pattern; n a multiple of 64). Returns the threads used.");

    // every operator's bindings (they use Attrs, registered above)
    ascend_ema_adam::module_registry::BindRegistered(mod, "_kernels");
}
