// tools/ascendc_check/run.py --emulate: the core's registers and the pipe-hazard checker (emu_core.h).
#include "emu_core.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>

namespace ascendc_emu {

namespace {

constexpr int kMaxFrames = 24;
constexpr int kEvents = 8;               // event ids 0-7 of a c220 vector core
constexpr int kReportedPerBlock = 6;      // hazards printed per block (all are counted)
constexpr uint64_t kPageBits = 12;
constexpr uint64_t kPageBytes = uint64_t{1} << kPageBits;

// The library's pipe_t values (tools/ascendc_check/intrinsic_types.h): S 0, V 1, MTE2 4, MTE3 5, ALL 6.
constexpr int kPipeTS = 0, kPipeTV = 1, kPipeTMte2 = 4, kPipeTMte3 = 5, kPipeTAll = 6;

using Clock = std::array<uint32_t, kPipes>;

struct Instruction {
    const char* name;
    uint8_t pipe;
    uint32_t seq;      // its place in its pipe (1-based)
    int frames;
    void* pcs[kMaxFrames];
};

// Per UB byte: the last writer and the last reader on each pipe (instruction ids; 0 none).
struct ShadowByte {
    uint32_t writer = 0;
    uint32_t reader[kPipes] = {};
};
struct ShadowPage {
    ShadowByte bytes[kPageBytes];
};

struct Core {
    VectorState regs;
    bool saturation = false;
    Counters counters;
    std::vector<Instruction> instructions{Instruction{}};  // id 0: none
    uint32_t issued[kPipes] = {};
    Clock clock[kPipes] = {};  // clock[p][q]: pipe q's instructions up to this seq are done, as pipe p knows
    bool flagSet[kPipes][kPipes][kEvents] = {};
    Clock flagToken[kPipes][kPipes][kEvents] = {};
    std::unordered_map<uint64_t, std::unique_ptr<ShadowPage>> shadow;
    int reported = 0;
    uint32_t lastPair[2] = {};  // the last reported (earlier, later): one report per pair, not per byte
};

Core& TheCore()
{
    static Core core;
    return core;
}

std::vector<std::string>& SourceRoots()
{
    static std::vector<std::string> roots;
    return roots;
}

int PipeOf(int pipeT)
{
    switch (pipeT) {
        case kPipeTS: return kPipeS;
        case kPipeTV: return kPipeV;
        case kPipeTMte2: return kPipeMte2;
        case kPipeTMte3: return kPipeMte3;
        default: break;
    }
    char name[64];
    std::snprintf(name, sizeof name, "a flag or barrier on pipe_t %d", pipeT);
    Unemulated(name);
}

/** A demangled function name without its parameter list. */
std::string WithoutParameters(std::string f)
{
    if (f.empty() || f.back() != ')') return f;
    int depth = 0;
    for (size_t i = f.size(); i-- > 0;) {
        depth += f[i] == ')' ? 1 : f[i] == '(' ? -1 : 0;
        if (depth == 0) return f.substr(0, i);
    }
    return f;
}

/** "file:line (function)" of the first frame of `ins` inside a source root, else its innermost frame. */
std::string CallSite(const Instruction& ins)
{
    std::string fallback;
    for (int f = 0; f < ins.frames; ++f) {
        Dl_info info{};
        if (dladdr(ins.pcs[f], &info) == 0 || info.dli_fname == nullptr) continue;
        // The return address points after the call: look up the byte before it.
        const uintptr_t offset = reinterpret_cast<uintptr_t>(ins.pcs[f]) - reinterpret_cast<uintptr_t>(info.dli_fbase) - 1;
        char cmd[1024];
        std::snprintf(cmd, sizeof cmd, "addr2line -i -f -C -e '%s' %#lx 2>/dev/null", info.dli_fname,
                      static_cast<unsigned long>(offset));
        FILE* p = popen(cmd, "r");
        if (p == nullptr) continue;
        char function[512], where[512];
        while (std::fgets(function, sizeof function, p) != nullptr && std::fgets(where, sizeof where, p) != nullptr) {
            function[std::strcspn(function, "\n")] = '\0';
            where[std::strcspn(where, "\n")] = '\0';
            for (const std::string& root : SourceRoots()) {
                if (std::strncmp(where, root.c_str(), root.size()) == 0) {
                    pclose(p);
                    const char* shortName = where + root.size();
                    while (*shortName == '/') ++shortName;
                    return std::string(shortName) + " (" + WithoutParameters(function) + ")";
                }
            }
            if (fallback.empty() && std::strstr(where, "??") == nullptr) fallback = std::string(where);
        }
        pclose(p);
    }
    return fallback.empty() ? std::string("(no call site)") : fallback;
}

void Report(const char* kind, uint32_t earlier, uint32_t later, const void* p)
{
    Core& c = TheCore();
    if (c.lastPair[0] == earlier && c.lastPair[1] == later) return;
    c.lastPair[0] = earlier;
    c.lastPair[1] = later;
    ++c.counters.hazards;
    if (c.reported++ >= kReportedPerBlock) return;
    const Instruction& a = c.instructions[earlier];
    const Instruction& b = c.instructions[later];
    std::printf("emulate: HAZARD %s on UB %p: %s %s #%u at %s, then %s %s #%u at %s, not ordered after it\n", kind, p,
                PipeName(a.pipe), a.name, a.seq, CallSite(a).c_str(), PipeName(b.pipe), b.name, b.seq,
                CallSite(b).c_str());
    std::fflush(stdout);
}

/** Whether instruction `later` (with `clock`, its pipe's clock at issue) is ordered after `earlier`. */
bool Ordered(const Core& c, uint32_t earlier, uint32_t later, const Clock& clock)
{
    const Instruction& a = c.instructions[earlier];
    const Instruction& b = c.instructions[later];
    if (a.pipe == b.pipe && a.pipe == kPipeV) return true;  // in order (the compiler's PIPE_V barriers)
    return clock[a.pipe] >= a.seq;
}

}  // namespace

const char* PipeName(int pipe)
{
    static const char* const names[kPipes] = {"S", "V", "MTE2", "MTE3"};
    return pipe >= 0 && pipe < kPipes ? names[pipe] : "?";
}

VectorState& State() { return TheCore().regs; }
Counters& BlockCounters() { return TheCore().counters; }

void SetSaturationMode(bool saturation)
{
    TheCore().saturation = saturation;
    ResetCore();
}

void ResetCore()
{
    Core& c = TheCore();
    c.regs = VectorState{};
    if (c.saturation) c.regs.ctrl &= ~(uint64_t{1} << 48);
    c.counters = Counters{};
    c.instructions.assign(1, Instruction{});
    std::memset(c.issued, 0, sizeof c.issued);
    std::memset(c.clock, 0, sizeof c.clock);
    std::memset(c.flagSet, 0, sizeof c.flagSet);
    c.shadow.clear();
    c.reported = 0;
    c.lastPair[0] = c.lastPair[1] = 0;
}

namespace {

/** An instruction in its pipe's order, with its call site (flags and barriers too). */
uint32_t Enqueue(int pipe, const char* name)
{
    Core& c = TheCore();
    Instruction ins{};
    ins.name = name;
    ins.pipe = static_cast<uint8_t>(pipe);
    ins.seq = ++c.issued[pipe];
    ins.frames = backtrace(ins.pcs, kMaxFrames);
    c.instructions.push_back(ins);
    return static_cast<uint32_t>(c.instructions.size() - 1);
}

}  // namespace

uint32_t Issue(int pipe, const char* name)
{
    if (pipe == kPipeV) ++TheCore().counters.vectorInstructions;
    return Enqueue(pipe, name);
}

void Access(uint32_t id, const void* p, uint64_t bytes, bool write)
{
    Core& c = TheCore();
    const int pipe = c.instructions[id].pipe;
    const Clock& clock = c.clock[pipe];
    const uint64_t begin = reinterpret_cast<uint64_t>(p);
    for (uint64_t a = begin; a < begin + bytes;) {
        std::unique_ptr<ShadowPage>& page = c.shadow[a >> kPageBits];
        if (!page) page = std::make_unique<ShadowPage>();
        const uint64_t end = std::min(begin + bytes, ((a >> kPageBits) + 1) << kPageBits);
        for (; a < end; ++a) {
            ShadowByte& s = page->bytes[a & (kPageBytes - 1)];
            const void* at = reinterpret_cast<const void*>(a);
            if (s.writer != 0 && s.writer != id && !Ordered(c, s.writer, id, clock)) {
                Report(write ? "WAW" : "RAW", s.writer, id, at);
            }
            if (write) {
                for (int q = 0; q < kPipes; ++q) {
                    if (s.reader[q] != 0 && s.reader[q] != id && !Ordered(c, s.reader[q], id, clock)) {
                        Report("WAR", s.reader[q], id, at);
                    }
                    s.reader[q] = 0;
                }
                s.writer = id;
            } else {
                s.reader[pipe] = id;
            }
        }
    }
}

void SetFlag(int srcPipeT, int dstPipeT, int event)
{
    Core& c = TheCore();
    const int src = PipeOf(srcPipeT), dst = PipeOf(dstPipeT);
    if (event < 0 || event >= kEvents) {
        std::printf("emulate: HAZARD set_flag(%s, %s, %d): event id out of range\n", PipeName(src), PipeName(dst),
                    event);
        ++c.counters.hazards;
        return;
    }
    const uint32_t id = Enqueue(src, "set_flag");
    ++c.counters.flags;
    if (c.flagSet[src][dst][event]) {
        ++c.counters.hazards;
        if (c.reported++ < kReportedPerBlock) {
            std::printf("emulate: HAZARD set_flag(%s, %s, %d) at %s while the flag is already set (set twice)\n",
                        PipeName(src), PipeName(dst), event, CallSite(c.instructions[id]).c_str());
        }
    }
    // Everything issued on src before the flag is done when it is raised.
    Clock token = c.clock[src];
    token[src] = c.issued[src];
    c.flagSet[src][dst][event] = true;
    c.flagToken[src][dst][event] = token;
}

void WaitFlag(int srcPipeT, int dstPipeT, int event)
{
    Core& c = TheCore();
    const int src = PipeOf(srcPipeT), dst = PipeOf(dstPipeT);
    const uint32_t id = Enqueue(dst, "wait_flag");
    if (event < 0 || event >= kEvents || !c.flagSet[src][dst][event]) {
        ++c.counters.hazards;
        if (c.reported++ < kReportedPerBlock) {
            std::printf("emulate: HAZARD wait_flag(%s, %s, %d) at %s without a set_flag: the pipe would wait "
                        "forever\n", PipeName(src), PipeName(dst), event, CallSite(c.instructions[id]).c_str());
        }
        return;
    }
    c.flagSet[src][dst][event] = false;
    const Clock& token = c.flagToken[src][dst][event];
    for (int q = 0; q < kPipes; ++q) c.clock[dst][q] = std::max(c.clock[dst][q], token[q]);
}

void Barrier(int pipeT)
{
    Core& c = TheCore();
    ++c.counters.barriers;
    if (pipeT == kPipeTAll) {
        Clock all{};
        for (int p = 0; p < kPipes; ++p) {
            for (int q = 0; q < kPipes; ++q) all[q] = std::max(all[q], c.clock[p][q]);
            all[p] = std::max(all[p], c.issued[p]);
        }
        for (int p = 0; p < kPipes; ++p) c.clock[p] = all;
        return;
    }
    const int pipe = PipeOf(pipeT);
    c.clock[pipe][pipe] = c.issued[pipe];
}

void EndBlock()
{
    Core& c = TheCore();
    for (int s = 0; s < kPipes; ++s) {
        for (int d = 0; d < kPipes; ++d) {
            for (int e = 0; e < kEvents; ++e) {
                if (!c.flagSet[s][d][e]) continue;
                ++c.counters.hazards;
                if (c.reported++ < kReportedPerBlock) {
                    std::printf("emulate: HAZARD set_flag(%s, %s, %d) still set when the block ends (no "
                                "wait_flag)\n", PipeName(s), PipeName(d), e);
                }
            }
        }
    }
}

void SetSourceRoots(std::vector<std::string> roots) { SourceRoots() = std::move(roots); }

void Unemulated(const char* name)
{
    std::fprintf(stderr, "emulate: the kernel reached %s, which the emulated intrinsic layer does not model\n",
                 name);
    std::fflush(stderr);
    std::abort();
}

void Undefined(const char* what)
{
    std::fprintf(stderr, "emulate: %s: the documented behaviour does not cover this\n", what);
    std::fflush(stderr);
    std::abort();
}

}  // namespace ascendc_emu
