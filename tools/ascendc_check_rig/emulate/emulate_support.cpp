// tools/ascendc_check --emulate drivers' support (emulate_support.h), and asc-tools' model hooks answered from the
// emulated core (its level-0 operand checks read the mask mode and words; Gather names its table).
#include "emulate_support.h"

#include <sys/stat.h>

#include <cerrno>
#include <cmath>
#include <sstream>

#include "emu_convert.h"
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

void Inputs::Fill(uint8_t* out, uint64_t n, Dt dt, float lo, float hi, bool sign)
{
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t r = Next();
        float v = lo + (hi - lo) * static_cast<float>(r >> 40) / 16777216.0f;
        if (v == 0.0f) v = hi * 0.5f;
        if (sign && (r >> 20 & 1)) v = -v;
        if (dt == Dt::kF32) {
            std::memcpy(out + i * 4, &v, 4);
        } else {
            const uint16_t b = dt == Dt::kF16 ? ascendc_emu::FloatToHalf(v, ascendc_emu::Round::kRint)
                                              : ascendc_emu::FloatToBf16(v, ascendc_emu::Round::kRint);
            std::memcpy(out + i * 2, &b, 2);
        }
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

}  // namespace ascendc_emulate
