/* Stand-in (tools/cann_host): the declaration opbase's composite-op shape_inference.cpp needs from
 * CANN's graph transformer (air repository, not in the snapshots). The individual-op path our
 * generated aclnn takes never calls it; the definition (cann_runtime_standin.cpp) aborts. */
#ifndef CANN_HOST_TRANSFER_SHAPE_EXT_H
#define CANN_HOST_TRANSFER_SHAPE_EXT_H
#include <array>
#include <cstdint>
#include "exe_graph/runtime/shape.h"
#include "graph/types.h"
namespace fe { class PlatFormInfos; }
namespace transformer {
using ExtAxisOpValue = std::array<int64_t, 4>;
class ShapeTransferAccordingToFormatExt {
public:
    static bool TransferShape(ge::Format origin, ge::Format storage, ge::DataType dtype, gert::Shape& shape,
                              const ExtAxisOpValue& ext, const fe::PlatFormInfos* platform);
};
}  // namespace transformer
#endif
