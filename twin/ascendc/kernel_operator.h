/**
 * @file kernel_operator.h
 * @brief Entry header of the AscendC CPU twin: the header AscendC kernels include. It provides the AscendC
 *        subset the project's kernels use, with upstream names and signatures, running on the host and
 *        aborting with "ascendc-twin: [RULE] Call(): ..." on any hardware or CPU-debug rule violation.
 *        Launch kernels with twin::Launch from twin_launch.h (host code only).
 */
#ifndef ASCEND_EMA_ADAM_TWIN_KERNEL_OPERATOR_H
#define ASCEND_EMA_ADAM_TWIN_KERNEL_OPERATOR_H

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "twin_context.h"
#include "twin_datacopy.h"
#include "twin_pipe.h"
#include "twin_tensor.h"
#include "twin_types.h"
#include "twin_vector.h"

namespace AscendC {

// AIV block index in [0, blockDim) and blockDim, from the launch.
inline int64_t GetBlockIdx() { return twin::detail::Block("GetBlockIdx").blockIdx; }
inline int64_t GetBlockNum() { return twin::detail::Block("GetBlockNum").blockNum; }

// As in CPU-debug mode: the workspace unchanged, which must not be null.
inline GM_ADDR GetUserWorkspace(GM_ADDR workspace) {
    twin::detail::Block("GetUserWorkspace");
    if (workspace == nullptr) twin::detail::Fail("GM_BOUNDS", "GetUserWorkspace", "workspace pointer is null");
    return workspace;
}

}  // namespace AscendC

namespace twin::detail {

// GET_TILING_DATA: byte-for-byte copy of the tiling struct from GM (bounds-checked, not counted as traffic).
template <class S>
void LoadTiling(S& out, const uint8_t* tiling) {
    static_assert(std::is_trivially_copyable_v<S>, "tiling structs are copied byte for byte");
    BlockContext& ctx = Block("GET_TILING_DATA");
    CheckGm(ctx, "GET_TILING_DATA", nullptr, 0, tiling, sizeof(S));
    std::memcpy(&out, tiling, sizeof(S));
}

inline bool TilingKeyIs(uint64_t key) { return Block("TILING_KEY_IS").tilingKey == key; }

}  // namespace twin::detail

#define KERNEL_TASK_TYPE_DEFAULT(type) static_cast<void>(type)
#define REGISTER_TILING_DEFAULT(Struct) using AscendCTwinRegisteredTiling = Struct
#define GET_TILING_DATA(var, tiling) \
    AscendCTwinRegisteredTiling var; \
    ::twin::detail::LoadTiling(var, tiling)
#define GET_TILING_DATA_WITH_STRUCT(Struct, var, tiling) \
    Struct var;                                          \
    ::twin::detail::LoadTiling(var, tiling)
// The tiling key belongs to the launch (per block context), not to the process.
#define TILING_KEY_IS(k) (::twin::detail::TilingKeyIs(static_cast<uint64_t>(k)))

#endif  // ASCEND_EMA_ADAM_TWIN_KERNEL_OPERATOR_H
