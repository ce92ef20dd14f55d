/**
 * @file test_harness.h
 * @brief A minimal case harness for the C++ test programs: AEA_CASE registers a case, EXPECT and
 *        EXPECT_MSG record failures, RunCases runs every case (or those named on the command line)
 *        and prints one line per case and a summary.
 */
#ifndef ASCEND_EMA_ADAM_TEST_HARNESS_H
#define ASCEND_EMA_ADAM_TEST_HARNESS_H

#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace aea_test {

struct Case {
    const char* name;
    void (*run)();
};

inline std::vector<Case>& Cases()
{
    static std::vector<Case> cases;
    return cases;
}

inline bool Register(const char* name, void (*run)())
{
    Cases().push_back({name, run});
    return true;
}

inline int& CaseFailures()
{
    static int failures = 0;
    return failures;
}

inline void Fail(const char* file, int line, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
inline void Fail(const char* file, int line, const char* fmt, ...)
{
    ++CaseFailures();
    std::fprintf(stderr, "  %s:%d: ", file, line);
    va_list args;
    va_start(args, fmt);
    std::vfprintf(stderr, fmt, args);
    va_end(args);
    std::fprintf(stderr, "\n");
}

#define AEA_CASE(name)                                                    \
    static void name();                                                   \
    static const bool name##_registered = aea_test::Register(#name, name); \
    static void name()

#define EXPECT(cond)                                                   \
    do {                                                               \
        if (!(cond)) aea_test::Fail(__FILE__, __LINE__, "%s", #cond); \
    } while (0)

#define EXPECT_MSG(cond, ...)                                            \
    do {                                                                 \
        if (!(cond)) aea_test::Fail(__FILE__, __LINE__, __VA_ARGS__);    \
    } while (0)

/** Runs every case (or those named on the command line); one line per case, then a summary. */
inline int RunCases(int argc, char** argv)
{
    int passed = 0;
    int failed = 0;
    for (const Case& c : Cases()) {
        bool selected = argc < 2;
        for (int i = 1; i < argc; ++i) {
            selected = selected || std::strcmp(argv[i], c.name) == 0;
        }
        if (!selected) {
            continue;
        }
        CaseFailures() = 0;
        c.run();
        const bool ok = CaseFailures() == 0;
        std::printf("%-56s %s\n", c.name, ok ? "ok" : "FAILED");
        std::fflush(stdout);
        (ok ? passed : failed)++;
    }
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 && passed > 0 ? 0 : 1;
}

inline bool Contains(const std::string& haystack, const std::string& needle)
{
    return haystack.find(needle) != std::string::npos;
}

}  // namespace aea_test

#endif  // ASCEND_EMA_ADAM_TEST_HARNESS_H
