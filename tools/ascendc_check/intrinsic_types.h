/**
 * @file intrinsic_types.h
 * @brief Stand-in for the TYPES of the closed CCE intrinsic layer (CANN's stub_fun.h), for
 *        tools/ascendc_check/run.py only. Never part of a build of the project.
 *
 * The real AscendC class library (asc-devkit) lowers every API to compiler intrinsics declared in
 * stub_fun.h, which is not public. tools/ascendc_check/run.py generates a stub_fun.h that includes this
 * file and then declares each intrinsic FUNCTION the library calls as a permissive template
 * (discovered from the library's own undeclared calls). What cannot be discovered that way are
 * the types and enumerators the library names, so they are written here: exactly the names the
 * library uses (found with `grep` over the headers a kernel includes), nothing else.
 *
 * Values are placeholders except where the library's CPU-debug code depends on them: pipe_t is
 * ordered as CCE's pipes (the library indexes event tables by pipe), event_t has the 8 IDs of a
 * c220 vector core. Nothing here is AscendC class-library API.
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_INTRINSIC_TYPES_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_INTRINSIC_TYPES_H

#include <cstdint>

// Hardware pipes (kernel_event.h: SUPPORTED_PIPE, PipeBarrier<pipe_t>).
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_MTE4, PIPE_MTE5, PIPE_V2,
              PIPE_FIX };

// Flag IDs of set_flag/wait_flag (kernel_event.h casts TEventID to event_t).
enum event_t { EVENT_ID0 = 0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

// Memory kinds of hset_flag/dsb (kernel_event.h casts integers to them).
enum mem_t { MEM_PLACEHOLDER = 0 };
enum mem_dsb_t { MEM_DSB_PLACEHOLDER = 0 };

// Data-cache maintenance (kernel_operator_cache_impl.h, kernel_reg.h: dcci).
enum class cache_line_t { SINGLE_CACHE_LINE = 0, ENTIRE_DATA_CACHE };
enum class dcci_dst_t { CACHELINE_OUT = 0 };

// Store-atomic configuration (kernel_operator_common_impl.h: template <atomic_type_t, atomic_op_t>).
enum atomic_type_t { ATOMIC_TYPE_PLACEHOLDER = 0 };
enum atomic_op_t { ATOMIC_OP_PLACEHOLDER = 0 };

// Cube-side enums named by shared headers (fixpipe, load2d, sort).
enum class pad_t { PAD_NONE = 0 };
enum class Order_t { VALUE_INDEX = 0, INDEX_VALUE, ONLY_VALUE, ONLY_INDEX };
enum class QuantMode_t { NoQuant = 0, F322F16, F322BF16, DEQF16, VDEQF16, QF322B8_PRE, VQF322B8_PRE, REQ8, VREQ8 };
enum addr_cal_mode_t { inc = 0, dec };

// Vector address registers of the transpose path (kernel_operator_vec_transpose_impl.h).
enum ub_addr8_t { VA0 = 0, VA1, VA2, VA3, VA4, VA5, VA6, VA7 };
enum vld_half_t { L128 = 0, H128 };

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_INTRINSIC_TYPES_H
