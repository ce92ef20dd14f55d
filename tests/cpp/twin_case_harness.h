// The case registry of the twin's C++ rule tests.
//
//   <binary> --list     one case name per line
//   <binary> <case>     run one case
//
// abort_<RULE>_<what>: a deliberately wrong kernel; must die with SIGABRT and "[<RULE>]" on stderr.
// ok_<what>:           must exit 0; checks its own results and prints every mismatch.
// bench_<what>:        prints timings; always exits 0.
// tests/python/kernel/test_twin_rules.py runs every abort_ and ok_ case of each binary in its own process.
#ifndef ASCEND_EMA_ADAM_TWIN_CASE_HARNESS_H
#define ASCEND_EMA_ADAM_TWIN_CASE_HARNESS_H

#include <cstdarg>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "twin_launch.h"

namespace twin_test {

struct Case {
    const char* name;
    int (*run)();
};

inline std::vector<Case>& Cases() {
    static std::vector<Case> cases;
    return cases;
}

inline bool Register(const char* name, int (*run)()) {
    Cases().push_back({name, run});
    return true;
}

#define TWIN_CASE(name)                                                 \
    int name();                                                         \
    const bool name##_registered = ::twin_test::Register(#name, name); \
    int name()

inline int g_failures = 0;

// Records a mismatch (printed, at most 20) when ok is false.
inline void Expect(bool ok, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
inline void Expect(bool ok, const char* fmt, ...) {
    if (ok) return;
    if (++g_failures > 20) return;  // enough to diagnose
    va_list args;
    va_start(args, fmt);
    std::fprintf(stderr, "mismatch: ");
    std::vfprintf(stderr, fmt, args);
    std::fprintf(stderr, "\n");
    va_end(args);
}

inline int Verdict() { return g_failures == 0 ? 0 : 1; }

inline int ExpectedAbort() {
    std::fprintf(stderr, "the launch returned, but an abort was expected\n");
    return 1;
}

template <class T>
twin::GmRegion Region(const std::vector<T>& v) {
    return {v.data(), v.size() * sizeof(T)};
}

template <class T>
uint8_t* Gm(std::vector<T>& v) {
    return reinterpret_cast<uint8_t*>(v.data());
}

inline twin::LaunchConfig Config(uint32_t blockDim, std::vector<twin::GmRegion> gm = {}) {
    twin::LaunchConfig cfg;
    cfg.blockDim = blockDim;
    cfg.gm = std::move(gm);
    return cfg;
}

inline int RunCases(int argc, char** argv) {
    if (argc == 2 && std::string(argv[1]) == "--list") {
        for (const Case& c : Cases()) std::printf("%s\n", c.name);
        return 0;
    }
    if (argc == 2) {
        for (const Case& c : Cases()) {
            if (argv[1] == std::string(c.name)) return c.run();
        }
        std::fprintf(stderr, "%s: unknown case '%s' (see --list)\n", argv[0], argv[1]);
        return 2;
    }
    std::fprintf(stderr, "usage: %s --list | <case>\n", argv[0]);
    return 2;
}

}  // namespace twin_test

#endif  // ASCEND_EMA_ADAM_TWIN_CASE_HARNESS_H
