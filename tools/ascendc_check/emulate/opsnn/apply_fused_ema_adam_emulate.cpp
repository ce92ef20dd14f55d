// tools/ascendc_check/run.py --emulate driver for CANN's own ApplyFusedEmaAdam kernel (hicann/ops-nn
// optim/apply_fused_ema_adam/op_kernel/apply_fused_ema_adam.cpp, compiled unchanged from $CANN_OPS_NN_DIR by
// opsnn.py against the real AscendC library with the emulated intrinsics): for each of OUR single-op cases that
// ops-nn's kernel can compute as the golden does — bias correction off (its Power<float> needs vexp/vln, which are
// not emulated) and the INF_NAN overflow mode — it reads the case's meta and inputs, tiles the same element count,
// dtype and attributes with ops-nn's host formulas (opsnn_tiling.h) on a platform of the case's `platform_cores`
// AIV cores (UB 196608 bytes, Ascend910B2-like), runs every block on the emulated core as CANN's in-place aclnn call
// does (var_ref = var, ...; a workspace of the size the host asks for), and writes <out>/opsnn_<our case>/ for
// compare.py, which holds its outputs byte for byte against ours. Usage: <program> <our cases dir> <out dir>
// ascendc-check: run-sources tools/ascendc_check/emulate/opsnn/opsnn_tiling.cpp
#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "emulate_support.h"
#include "opsnn_tiling.h"

extern "C" void apply_fused_ema_adam(uint8_t* grad, uint8_t* var, uint8_t* m, uint8_t* v, uint8_t* s, uint8_t* step,
                                     uint8_t* varRef, uint8_t* mRef, uint8_t* vRef, uint8_t* sRef, uint8_t* workspace,
                                     uint8_t* tiling);

namespace {

using ascendc_emulate::Dt;
using Meta = std::map<std::string, std::string>;

constexpr uint64_t kUbBytes = 196608;  // an Ascend910B2 AIV core's UB

bool ReadMeta(const std::string& dir, Meta* meta)
{
    std::FILE* f = std::fopen((dir + "/meta.txt").c_str(), "r");
    if (f == nullptr) return false;
    char line[512];
    while (std::fgets(line, sizeof line, f) != nullptr) {
        std::string text(line);
        while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) text.pop_back();
        const size_t eq = text.find('=');
        if (eq != std::string::npos) (*meta)[text.substr(0, eq)] = text.substr(eq + 1);
    }
    std::fclose(f);
    return true;
}

[[noreturn]] void Fail(const std::string& what)
{
    std::fprintf(stderr, "emulate: ops-nn driver: %s\n", what.c_str());
    std::exit(2);
}

const std::string& Field(const Meta& meta, const std::string& dir, const char* key)
{
    const auto it = meta.find(key);
    if (it == meta.end()) Fail(dir + "/meta.txt has no " + key);
    return it->second;
}

double Number(const Meta& meta, const std::string& dir, const char* key)
{
    const std::string& text = Field(meta, dir, key);
    char* end = nullptr;
    const double value = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0') Fail(dir + "/meta.txt: " + key + "=" + text + " is not a number");
    return value;
}

/** A tensor file of exactly `bytes` bytes into `out`. */
void ReadTensor(const std::string& path, uint8_t* out, uint64_t bytes)
{
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) Fail("cannot open " + path);
    const uint64_t got = bytes == 0 ? 0 : std::fread(out, 1, bytes, f);
    const bool longer = std::fgetc(f) != EOF;
    std::fclose(f);
    if (got != bytes || longer) Fail(path + " does not hold " + std::to_string(bytes) + " bytes");
}

bool DtOf(const std::string& name, Dt* dt, opsnn_emulate::DType* type)
{
    for (Dt d : {Dt::kF32, Dt::kF16, Dt::kBf16}) {
        if (name == ascendc_emulate::DtName(d)) {
            *dt = d;
            *type = d == Dt::kF32 ? opsnn_emulate::DType::kFloat32
                                  : d == Dt::kF16 ? opsnn_emulate::DType::kFloat16 : opsnn_emulate::DType::kBFloat16;
            return true;
        }
    }
    return false;
}

/** Runs ops-nn's kernel on our case `ours` (in `root`); returns its failed blocks. */
int RunCase(const std::string& root, const std::string& ours, const Meta& meta, const std::string& out)
{
    const std::string dir = root + "/" + ours;
    Dt dt;
    opsnn_emulate::DType type;
    if (!DtOf(Field(meta, dir, "dtype"), &dt, &type)) Fail(dir + ": unknown dtype " + Field(meta, dir, "dtype"));
    const uint64_t numel = static_cast<uint64_t>(Number(meta, dir, "numel"));
    const int64_t stepValue = static_cast<int64_t>(Number(meta, dir, "step"));
    // The attributes reach ops-nn's host as the op's float attributes (int64 mode, bool bias_correction).
    opsnn_emulate::Attrs attrs;
    attrs.lr = static_cast<float>(Number(meta, dir, "lr"));
    attrs.emaDecay = static_cast<float>(Number(meta, dir, "ema_decay"));
    attrs.beta1 = static_cast<float>(Number(meta, dir, "beta1"));
    attrs.beta2 = static_cast<float>(Number(meta, dir, "beta2"));
    attrs.eps = static_cast<float>(Number(meta, dir, "eps"));
    attrs.mode = static_cast<int64_t>(Number(meta, dir, "mode"));
    attrs.biasCorrection = Number(meta, dir, "bias_correction") != 0.0;
    attrs.weightDecay = static_cast<float>(Number(meta, dir, "weight_decay"));
    opsnn_emulate::Platform platform;
    platform.aivCoreNum = static_cast<uint32_t>(Number(meta, dir, "platform_cores"));
    platform.ubBytes = kUbBytes;
    opsnn_emulate::Tiling t;
    std::string error;
    if (!opsnn_emulate::ComputeTiling(numel, type, attrs, platform, &t, &error)) {
        Fail(dir + ": ops-nn's tiling fails: " + error);
    }

    const uint64_t bytes = numel * ascendc_emulate::DtBytes(dt);
    ascendc_emulate::SharedBytes grad(bytes), var(bytes), m(bytes), v(bytes), s(bytes), step(8),
        workspace(std::max<uint64_t>(t.workspaceSize, 1)), tiling(sizeof t.data);
    ReadTensor(dir + "/grad.in", grad.data(), bytes);
    ReadTensor(dir + "/var.in", var.data(), bytes);
    ReadTensor(dir + "/m.in", m.data(), bytes);
    ReadTensor(dir + "/v.in", v.data(), bytes);
    ReadTensor(dir + "/s.in", s.data(), bytes);
    std::memcpy(step.data(), &stepValue, 8);
    std::memcpy(tiling.data(), &t.data, sizeof t.data);

    const std::string name = "opsnn_" + ours;
    const ascendc_emulate::LaunchOutcome o = ascendc_emulate::Launch(name.c_str(), t.blockDim, t.tilingKey, false, [&] {
        apply_fused_ema_adam(grad.data(), var.data(), m.data(), v.data(), s.data(), step.data(), var.data(), m.data(),
                             v.data(), s.data(), workspace.data(), tiling.data());
    });

    ascendc_emulate::CaseWriter w(out, name);
    for (const auto& [file, buf] : {std::pair<const char*, const ascendc_emulate::SharedBytes*>{"var.out", &var},
                                    {"m.out", &m}, {"v.out", &v}, {"s.out", &s}}) {
        w.Tensor(file, buf->data(), bytes);
    }
    w.Meta("ours", ours);
    w.Meta("kernel", "opsnn_single");
    w.Meta("dtype", ascendc_emulate::DtName(dt));
    w.Meta("numel", static_cast<double>(numel));
    w.Meta("step", static_cast<double>(stepValue));
    w.Meta("lr", static_cast<double>(attrs.lr));
    w.Meta("ema_decay", static_cast<double>(attrs.emaDecay));
    ascendc_emulate::MetaAdamAttrs(w, attrs);
    ascendc_emulate::MetaTiling(w, false, t.tilingKey, platform.aivCoreNum, t.blockDim, t.data.coreCalcMax);
    w.Meta("ub_bytes", static_cast<double>(platform.ubBytes));
    w.Meta("front_core_num", static_cast<double>(t.data.frontCoreNum));
    w.Meta("tail_core_num", static_cast<double>(t.data.tailCoreNum));
    w.Meta("core_calc_num", static_cast<double>(t.data.coreCalcNum));
    w.Meta("loop_num", static_cast<double>(t.data.loopNum));
    w.Meta("front_calc_extra", static_cast<double>(t.data.frontCalcExtra));
    w.Meta("tail_calc_extra", static_cast<double>(t.data.tailCalcExtra));
    w.Meta("workspace_bytes", static_cast<double>(t.workspaceSize));
    ascendc_emulate::MetaOutcome(w, o);
    return o.failedBlocks;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <our cases dir> <ops-nn cases dir>\n", argv[0]);
        return 2;
    }
    ascendc_emulate::UseSourceRootsFromEnvironment();
    const std::string root = argv[1], out = argv[2];
    std::vector<std::string> names;
    if (DIR* d = opendir(root.c_str())) {
        while (const dirent* e = readdir(d)) {
            if (std::strncmp(e->d_name, "single_", 7) == 0) names.emplace_back(e->d_name);
        }
        closedir(d);
    } else {
        Fail("cannot read " + root);
    }
    std::sort(names.begin(), names.end());
    int launches = 0, failed = 0;
    for (const std::string& name : names) {
        Meta meta;
        const std::string dir = root + "/" + name;
        if (!ReadMeta(dir, &meta)) continue;
        if (Field(meta, dir, "kernel") != "single" || Number(meta, dir, "bias_correction") != 0.0 ||
            Field(meta, dir, "overflow_mode") != "inf_nan") {
            continue;
        }
        failed += RunCase(root, name, meta, out);
        ++launches;
    }
    if (launches == 0) {
        std::printf("emulate: %s: no case of ours in %s with bias_correction=0 and overflow_mode=inf_nan\n", argv[0],
                    root.c_str());
        return 1;
    }
    std::printf("emulate: %s: %d launches of ops-nn's kernel, %d failed block(s)\n", argv[0], launches, failed);
    return failed == 0 ? 0 : 1;
}
