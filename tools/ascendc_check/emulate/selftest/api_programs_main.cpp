// tools/ascendc_check/run.py --emulate self-tests: runs the API programs of api_programs.h on the inputs selftests.py
// wrote, on one side: the real AscendC library over the emulated intrinsics (default; linked with
// api_programs_kernels.cpp and the emulator), or the project's CPU twin (built with -DAEA_SELFTEST_TWIN and
// -I twin/ascendc, the kernels compiled into this file).
//
//   api_programs_<side> <in dir> <out dir>
//
// <in dir>/programs.txt has one line per program: "<name> <kernel> <saturation 0|1>"; its inputs are
// <name>.params (a ProgramParams), <name>.x, <name>.y and <name>.z (z's bytes before the launch). Each program runs
// on one block in its own process; its z after the launch goes to <out dir>/<name>.z. Prints
// "api-program ok|FAIL <name>: ..." per program.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifdef AEA_SELFTEST_TWIN
#include "kernel_operator.h"
#include "twin_launch.h"

#include "api_programs.h"
#else
#define AEA_SELFTEST_DECLARATIONS_ONLY
#include "api_programs.h"
#include "emulate_support.h"
#endif

namespace {

using Kernel = void (*)(uint8_t*, uint8_t*, uint8_t*, uint8_t*);

struct Entry {
    const char* name;
    Kernel fn;
};

#define AEA_SELFTEST_ENTRY(name) {#name, name},
const Entry kKernels[] = {AEA_SELFTEST_KERNELS(AEA_SELFTEST_ENTRY)};
#undef AEA_SELFTEST_ENTRY

std::vector<uint8_t> ReadFile(const std::string& path)
{
    std::ifstream f(path, std::ios::binary);
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

bool WriteFile(const std::string& path, const uint8_t* p, size_t n)
{
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return false;
    const bool ok = n == 0 || std::fwrite(p, 1, n, f) == n;
    std::fclose(f);
    return ok;
}

/** A buffer in memory shared with the forked process that runs a program (its GM writes must come back). */
class Bytes {
public:
    explicit Bytes(const std::vector<uint8_t>& init) : n_(init.size() < 32 ? 32 : init.size())
    {
        p_ = static_cast<uint8_t*>(mmap(nullptr, n_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
        if (p_ == MAP_FAILED) {
            std::perror("api-programs: mmap");
            std::exit(2);
        }
        if (!init.empty()) std::memcpy(p_, init.data(), init.size());
    }
    Bytes(const Bytes&) = delete;
    Bytes& operator=(const Bytes&) = delete;
    ~Bytes() { munmap(p_, n_); }
    uint8_t* data() const { return p_; }
    size_t size() const { return n_; }

private:
    size_t n_;
    uint8_t* p_;
};

/** Runs one program on one block in its own process; returns "" or why it failed. z holds the result. */
std::string RunProgram(const std::string& name, Kernel kernel, bool saturation, Bytes& params, Bytes& x, Bytes& y,
                       Bytes& z)
{
#ifdef AEA_SELFTEST_TWIN
    std::fflush(stdout);
    std::fflush(stderr);
    const pid_t pid = fork();
    if (pid == 0) {  // the twin aborts the process on a rule violation
        twin::LaunchConfig cfg;
        cfg.blockDim = 1;
        cfg.overflowMode = saturation ? twin::FloatOverflowMode::Saturation : twin::FloatOverflowMode::InfNan;
        cfg.gm = {{params.data(), params.size()}, {x.data(), x.size()}, {y.data(), y.size()}, {z.data(), z.size()}};
        twin::Launch(kernel, cfg, params.data(), x.data(), y.data(), z.data());
        std::fflush(stdout);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    (void)name;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? "" : "the twin launch failed (see its output)";
#else
    const ascendc_emulate::LaunchOutcome o = ascendc_emulate::Launch(name.c_str(), 1, 0, saturation, [&] {
        kernel(params.data(), x.data(), y.data(), z.data());
    });
    if (o.failedBlocks != 0) return "the emulated block failed (see its output)";
    if (o.hazards != 0) return std::to_string(o.hazards) + " pipe hazard(s)";
    return "";
#endif
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 3) {
        std::fprintf(stderr, "usage: %s <in dir> <out dir>\n", argv[0]);
        return 2;
    }
    const std::string in = argv[1], out = argv[2];
#ifndef AEA_SELFTEST_TWIN
    ascendc_emulate::UseSourceRootsFromEnvironment();
#endif
    std::ifstream list(in + "/programs.txt");
    if (!list) {
        std::fprintf(stderr, "api-programs: no %s/programs.txt\n", in.c_str());
        return 2;
    }
    int failed = 0;
    for (std::string line; std::getline(list, line);) {
        std::istringstream fields(line);
        std::string name, kernelName;
        int saturation = 0;
        if (!(fields >> name >> kernelName >> saturation)) continue;
        Kernel kernel = nullptr;
        for (const Entry& e : kKernels) {
            if (kernelName == e.name) kernel = e.fn;
        }
        std::string why;
        if (kernel == nullptr) {
            why = "no kernel " + kernelName;
        } else {
            Bytes params(ReadFile(in + "/" + name + ".params")), x(ReadFile(in + "/" + name + ".x")),
                y(ReadFile(in + "/" + name + ".y"));
            const std::vector<uint8_t> z0 = ReadFile(in + "/" + name + ".z");
            Bytes z(z0);
            why = RunProgram(name, kernel, saturation != 0, params, x, y, z);
            if (why.empty() && !WriteFile(out + "/" + name + ".z", z.data(), z0.size())) {
                why = "cannot write the output";
            }
        }
        std::printf("api-program %s %s%s%s\n", why.empty() ? "ok  " : "FAIL", name.c_str(), why.empty() ? "" : ": ",
                    why.c_str());
        failed += !why.empty();
    }
    return failed == 0 ? 0 : 1;
}
