// tools/ascendc_check/run.py --emulate: expect-tests of the pipe-hazard checker. Each kernel of hazard_kernels.cpp runs on
// one emulated core over 4 chunks (a double-buffered queue reuses a buffer from the third on); the correct
// pipelines must report no hazard and compute y = 2x, every broken one must be caught, with the report the test
// names. Prints "hazard-selftest ok|FAIL <kernel>: ..." per kernel.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "emulate_support.h"

extern "C" {
void hazard_queue_ok(uint8_t* x, uint8_t* y, uint32_t chunks);
void hazard_missing_deque(uint8_t* x, uint8_t* y, uint32_t chunks);
void hazard_free_before_read(uint8_t* x, uint8_t* y, uint32_t chunks);
void hazard_flags_ok(uint8_t* x, uint8_t* y, uint32_t chunks);
void hazard_missing_flag_pair(uint8_t* x, uint8_t* y, uint32_t chunks);
void hazard_flag_set_twice(uint8_t* x, uint8_t* y, uint32_t chunks);
void hazard_wait_without_set(uint8_t* x, uint8_t* y, uint32_t chunks);
}

namespace {

struct Test {
    const char* name;
    void (*kernel)(uint8_t*, uint8_t*, uint32_t);
    const char* expect;  // nullptr: no hazard, y = 2x; else a report containing this text
};

constexpr uint32_t kChunks = 4;
constexpr uint32_t kElems = kChunks * 256;

}  // namespace

int main()
{
    ascendc_emulate::UseSourceRootsFromEnvironment();
    const Test tests[] = {
        {"hazard_queue_ok", hazard_queue_ok, nullptr},
        {"hazard_flags_ok", hazard_flags_ok, nullptr},
        {"hazard_missing_deque", hazard_missing_deque, "RAW"},
        {"hazard_free_before_read", hazard_free_before_read, "WAR"},
        {"hazard_missing_flag_pair", hazard_missing_flag_pair, "RAW"},
        {"hazard_flag_set_twice", hazard_flag_set_twice, "set twice"},
        {"hazard_wait_without_set", hazard_wait_without_set, "without a set_flag"},
    };
    int failed = 0;
    for (const Test& t : tests) {
        ascendc_emulate::SharedBytes x(kElems * 4), y(kElems * 4), log(1 << 16);
        ascendc_emulate::Inputs(7).Fill(x.data(), kElems, ascendc_emulate::Dt::kF32, 0.5f, 2.0f, true);
        std::fflush(stdout);
        // The block's report goes to a pipe-free temporary file so the test can search it.
        std::FILE* capture = std::tmpfile();
        const int saved = dup(fileno(stdout));
        dup2(fileno(capture), fileno(stdout));
        const ascendc_emulate::LaunchOutcome o = ascendc_emulate::Launch(t.name, 1, 0, false, [&] {
            t.kernel(x.data(), y.data(), kChunks);
        });
        std::fflush(stdout);
        dup2(saved, fileno(stdout));
        close(saved);
        std::string report;
        std::rewind(capture);
        for (int ch; (ch = std::fgetc(capture)) != EOF;) report += static_cast<char>(ch);
        std::fclose(capture);
        bool ok;
        std::string why;
        if (t.expect == nullptr) {
            bool doubled = true;
            for (uint32_t i = 0; i < kElems; ++i) {
                float a, b;
                std::memcpy(&a, x.data() + i * 4, 4);
                std::memcpy(&b, y.data() + i * 4, 4);
                doubled = doubled && b == 2.0f * a;
            }
            ok = o.hazards == 0 && o.failedBlocks == 0 && doubled;
            why = std::to_string(o.hazards) + " hazard(s)" + (doubled ? "" : ", y is not 2x");
        } else {
            ok = o.hazards > 0 && report.find(t.expect) != std::string::npos;
            why = std::to_string(o.hazards) + " hazard(s) reported, expected \"" + t.expect + "\"";
        }
        std::printf("hazard-selftest %s %s: %s\n", ok ? "ok  " : "FAIL", t.name, why.c_str());
        if (!ok || t.expect != nullptr) {
            std::printf("%s", report.c_str());
        }
        failed += !ok;
    }
    return failed == 0 ? 0 : 1;
}
