// tools/ascendc_check/run.py --emulate drivers' support (emulate_support.h), and asc-tools' model hooks answered from the
// emulated core (its level-0 operand checks read the mask mode and words; Gather names its table).
#include "emulate_support.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <sstream>
#include <utility>

#include "emu_convert.h"
#include "launcher_list.h"
#include "model/model_factory_mask.h"

uint64_t ModelFactoryGetMaskHigh() { return ascendc_emu::State().maskHigh; }
uint64_t ModelFactoryGetMaskLow() { return ascendc_emu::State().maskLow; }
uint64_t ModelFactoryGetMaskMode() { return ascendc_emu::State().counterMode ? 1 : 0; }

// Gather's CPU-debug implementation hands the model its source table (dav_c220 kernel_operator_vec_gather_impl.h;
// declared in asc-tools' cpudebug utils/kernel_utils_constants.h): the emulated vgather reads it from there.
namespace AscendC {
void SetModelGatherbSrc0Tensor(uint64_t address, const uint32_t length)
{
    ascendc_emu::State().gatherSource = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(address));
    ascendc_emu::State().gatherSourceLength = length;
}
}  // namespace AscendC

namespace ascendc_emulate {

SharedBytes::SharedBytes(uint64_t bytes) : n_(bytes)
{
    p_ = mmap(nullptr, bytes == 0 ? 1 : bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p_ == MAP_FAILED) {
        std::perror("emulate: mmap");
        std::exit(2);
    }
}

SharedBytes::~SharedBytes()
{
    if (p_ != nullptr) munmap(p_, n_ == 0 ? 1 : n_);
}

uint32_t DtBytes(Dt dt) { return dt == Dt::kF32 ? 4 : 2; }
const char* DtName(Dt dt) { return dt == Dt::kF32 ? "float32" : dt == Dt::kF16 ? "float16" : "bfloat16"; }

uint64_t Inputs::Next()
{
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return state_;
}

void PutFloat(uint8_t* out, uint64_t i, Dt dt, float v)
{
    if (dt == Dt::kF32) {
        std::memcpy(out + i * 4, &v, 4);
    } else {
        const uint16_t b = dt == Dt::kF16 ? ascendc_emu::FloatToHalf(v, ascendc_emu::Round::kRint)
                                          : ascendc_emu::FloatToBf16(v, ascendc_emu::Round::kRint);
        std::memcpy(out + i * 2, &b, 2);
    }
}

void Inputs::Fill(uint8_t* out, uint64_t n, Dt dt, float lo, float hi, bool sign)
{
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t r = Next();
        float v = lo + (hi - lo) * static_cast<float>(r >> 40) / 16777216.0f;
        if (v == 0.0f) v = hi * 0.5f;
        if (sign && (r >> 20 & 1)) v = -v;
        PutFloat(out, i, dt, v);
    }
}

CaseWriter::CaseWriter(const std::string& root, const std::string& name) : dir_(root + "/" + name)
{
    mkdir(root.c_str(), 0755);
    if (mkdir(dir_.c_str(), 0755) != 0 && errno != EEXIST) {
        std::perror(("emulate: mkdir " + dir_).c_str());
        std::exit(2);
    }
    meta_ = std::fopen((dir_ + "/meta.txt").c_str(), "w");
    if (meta_ == nullptr) {
        std::perror("emulate: meta.txt");
        std::exit(2);
    }
}

CaseWriter::~CaseWriter()
{
    if (meta_ != nullptr) std::fclose(meta_);
}

void CaseWriter::Meta(const std::string& key, const std::string& value)
{
    std::fprintf(meta_, "%s=%s\n", key.c_str(), value.c_str());
}

void CaseWriter::Meta(const std::string& key, double value)
{
    std::fprintf(meta_, "%s=%.17g\n", key.c_str(), value);
}

void CaseWriter::Tensor(const std::string& file, const uint8_t* data, uint64_t bytes)
{
    std::FILE* f = std::fopen((dir_ + "/" + file).c_str(), "wb");
    if (f == nullptr || (bytes != 0 && std::fwrite(data, 1, bytes, f) != bytes)) {
        std::perror(("emulate: " + dir_ + "/" + file).c_str());
        std::exit(2);
    }
    std::fclose(f);
}

void UseSourceRootsFromEnvironment()
{
    std::vector<std::string> roots;
    if (const char* env = std::getenv("AEA_EMU_SOURCE_ROOTS")) {
        std::stringstream ss(env);
        std::string root;
        while (std::getline(ss, root, ':')) {
            if (!root.empty()) roots.push_back(root);
        }
    }
    ascendc_emu::SetSourceRoots(roots);
}

DriverArgs::DriverArgs(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <out dir> <seed>\n", argv[0]);
        return;
    }
    UseSourceRootsFromEnvironment();
    out = argv[1];
    seed = std::strtoull(argv[2], nullptr, 10);
    ok = true;
}

int DriverResult(const char* program, int launches, int failedBlocks)
{
    std::printf("emulate: %s: %d launches, %d failed block(s)\n", program, launches, failedBlocks);
    return failedBlocks == 0 ? 0 : 1;
}

int64_t SeededStep(uint64_t seed, int index)
{
    return 1 + static_cast<int64_t>((seed + static_cast<uint64_t>(index) * 7919) % 1000);
}

void MetaTiling(CaseWriter& w, bool saturation, uint64_t tilingKey, uint32_t platformCores, uint32_t cores,
                uint64_t chunk)
{
    w.Meta("overflow_mode", saturation ? "saturation" : "inf_nan");
    w.Meta("tiling_key", static_cast<double>(tilingKey));
    w.Meta("platform_cores", static_cast<double>(platformCores));
    w.Meta("cores", static_cast<double>(cores));
    w.Meta("chunk", static_cast<double>(chunk));
}

void MetaOutcome(CaseWriter& w, const LaunchOutcome& o)
{
    w.Meta("failed_blocks", static_cast<double>(o.failedBlocks));
    w.Meta("hazards", static_cast<double>(o.hazards));
    w.Meta("vector_instructions", static_cast<double>(o.total.vectorInstructions));
    w.Meta("mte2_bytes", static_cast<double>(o.total.mte2Bytes));
    w.Meta("mte3_bytes", static_cast<double>(o.total.mte3Bytes));
    w.Meta("max_core_vector_instructions", static_cast<double>(o.perCoreMax.vectorInstructions));
    w.Meta("max_core_mte2_copies", static_cast<double>(o.perCoreMax.mte2Copies));
}

List MakeList(const std::vector<uint64_t>& counts, uint32_t elemBytes)
{
    List l;
    std::vector<uint8_t*> data;
    std::vector<std::vector<uint64_t>> shapes;
    for (uint64_t n : counts) {
        l.entries.emplace_back(n * elemBytes);
        data.push_back(l.entries.back().data());
        shapes.push_back({n});
    }
    l.words = ascendc_check::LauncherListWords(data, shapes);
    return l;
}

void MetaList(CaseWriter& w, const char* kernel, size_t entries, Dt param, Dt grad, const Dt* copy, bool ema,
              bool maximize)
{
    w.Meta("kernel", kernel);
    w.Meta("entries", static_cast<double>(entries));
    w.Meta("param", DtName(param));
    w.Meta("grad", DtName(grad));
    w.Meta("copy", copy != nullptr ? DtName(*copy) : "");
    w.Meta("ema", ema ? 1.0 : 0.0);
    w.Meta("maximize", maximize ? 1.0 : 0.0);
}

void Lists::Add(const std::string& name, List list)
{
    outWords_[name] = list.words;
    lists_.emplace(name, std::move(list));
}

uint8_t* Lists::In(const std::string& name)
{
    return reinterpret_cast<uint8_t*>(Has(name) ? lists_.at(name).words.data() : &empty_);
}

uint8_t* Lists::Out(const std::string& name)
{
    return reinterpret_cast<uint8_t*>(Has(name) ? outWords_.at(name).data() : &empty_);
}

void Lists::Write(CaseWriter& w, const char* suffix, bool inputs)
{
    for (auto& [name, l] : lists_) {
        if (!inputs && name == "grads") continue;
        for (size_t i = 0; i < l.entries.size(); ++i) {
            w.Tensor(name + "_" + std::to_string(i) + suffix, l.entries[i].data(), l.entries[i].size());
        }
    }
}

ListScalars::ListScalars(int64_t step, float foundInf, Given given) : step_(step), foundInf_(foundInf), given_(given)
{
    uint8_t* const base = bytes_.data();
    std::memcpy(base, &step, 8);
    std::memcpy(base + 8, &kGradScale, 4);
    std::memcpy(base + 12, &foundInf, 4);
    std::memcpy(base + 16, &kLr, 4);
    std::memcpy(base + 20, &kEmaDecay, 4);
}

void ListScalars::Meta(CaseWriter& w, const ascend_ema_adam::Attrs& attrs) const
{
    if (given_.gradScale) w.Meta("grad_scale", kGradScale); else w.Meta("grad_scale", "none");
    if (given_.foundInf) w.Meta("found_inf", foundInf_); else w.Meta("found_inf", "none");
    w.Meta("step", static_cast<double>(step_));
    w.Meta("lr", given_.lr ? double{kLr} : attrs.lr);
    w.Meta("ema_decay", given_.emaDecay ? double{kEmaDecay} : attrs.emaDecay);
    MetaAdamAttrs(w, attrs);
}

}  // namespace ascendc_emulate
