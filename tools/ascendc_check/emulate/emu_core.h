/**
 * @file emu_core.h
 * @brief tools/ascendc_check/run.py --emulate only (never part of a build of the project): the state of one emulated
 *        vector core under the real AscendC library — the vector mask and its mode, CTRL, the MOV pad value —
 *        and the pipe-hazard checker. The intrinsics themselves are emu_intrinsics.h.
 *
 * Pipes. The scalar unit issues each instruction to its pipe in program order; the pipes run concurrently. An
 * instruction on pipe V, MTE2 (GM -> UB) or MTE3 (UB -> GM) may touch the same UB bytes as an earlier one on
 * another pipe only when the program orders them: set_flag(src, dst, id) in src's queue and wait_flag(src, dst,
 * id) in dst's, or pipe_barrier. The checker keeps a vector clock per pipe (how far each pipe is known to have
 * completed) and, per UB byte, the last writer and the last reader on each pipe, and reports every access that
 * is not ordered after the conflicting one (RAW, WAR, WAW) with both instructions' call sites in the kernel.
 *
 * Within a pipe: V instructions are treated as completing in program order, because the device compiler
 * inserts the PIPE_V barriers between dependent vector instructions on arch 2201 (asc-devkit docs,
 * "关键特性说明"); two copies on one MTE pipe are ordered only by a pipe_barrier of that pipe (or a flag chain
 * through another pipe), as the DataCopy documentation asks for overlapping copies.
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_EMU_CORE_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_EMU_CORE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ascendc_emu {

/** The pipes the checker models (indexes of its clocks). */
enum Pipe : uint8_t { kPipeS = 0, kPipeV, kPipeMte2, kPipeMte3, kPipes };
const char* PipeName(int pipe);

/** The vector unit's registers the intrinsics read. */
struct VectorState {
    bool counterMode = false;               // set_mask_count / set_mask_norm
    uint64_t maskHigh = ~uint64_t{0};       // set_vector_mask(high, low)
    uint64_t maskLow = ~uint64_t{0};
    uint64_t ctrl = uint64_t{1} << 48;      // CTRL: bit 48 set = INF_NAN (non-saturating) mode
    uint64_t movPadValue = 0;               // set_mov_pad_val
    uint64_t cmpMask[2] = {0, 0};           // CMPMASK (set_cmpmask): vsel's mask, or the mask tensor's address
    const uint8_t* gatherSource = nullptr;  // vgather's table as the CPU-debug library hands it to the model
    uint64_t gatherSourceLength = 0;        // (SetModelGatherbSrc0Tensor: src + base offset, src's elements)
};
VectorState& State();

/** The device's float-overflow mode each block starts in (CTRL[48], as the runtime loads it). */
void SetSaturationMode(bool saturation);
/** True while CTRL[48] is clear: half/bf16 results and conversions to them saturate. */
inline bool Saturating() { return (State().ctrl >> 48 & 1) == 0; }

/** Resets the core (registers, flags, clocks, shadow memory, counters) for a new block. */
void ResetCore();

/** Instruction accounting of one block, for the side-by-side table. */
struct Counters {
    uint64_t vectorInstructions = 0;  // V-pipe instructions (arithmetic, conversions, duplicates)
    uint64_t mte2Bytes = 0;           // GM -> UB bytes moved
    uint64_t mte3Bytes = 0;           // UB -> GM bytes moved
    uint64_t mte2Copies = 0;
    uint64_t mte3Copies = 0;
    uint64_t flags = 0;               // set_flag / wait_flag pairs
    uint64_t barriers = 0;
    uint64_t hazards = 0;
};
Counters& BlockCounters();

// ---- the hazard checker ------------------------------------------------------------------------------------
/** Starts an instruction on `pipe` (records its call site; a V one counts as a vector instruction); returns its
 *  id for Access(). */
uint32_t Issue(int pipe, const char* name);
/** The instruction `id` reads (write = false) or writes `bytes` UB bytes at `p`. */
void Access(uint32_t id, const void* p, uint64_t bytes, bool write);
/** set_flag(src, dst, id) / wait_flag(src, dst, id) / pipe_barrier(pipe); pipes as the library's pipe_t values. */
void SetFlag(int srcPipeT, int dstPipeT, int event);
void WaitFlag(int srcPipeT, int dstPipeT, int event);
void Barrier(int pipeT);
/** At the end of a block: a set flag never waited for is reported (the next kernel would inherit it). */
void EndBlock();

/** Source files whose lines are the kernel's call sites (a hazard names the first frame in one of them). */
void SetSourceRoots(std::vector<std::string> roots);

/** An intrinsic the kernels reached without emulated semantics: names it and aborts. */
[[noreturn]] void Unemulated(const char* name);
/** An instruction given operands the documentation leaves undefined (or calls an error): says which and aborts. */
[[noreturn]] void Undefined(const char* what);

}  // namespace ascendc_emu

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_EMU_CORE_H
