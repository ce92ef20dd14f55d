/* Stand-in (tools/cann_host): the registry of kernel binaries linked INTO an op_api library
 * (CANN's closed libregister; not in the public metadef snapshot). Our kernels are found the
 * dynamic way instead -- binary_info_config.json + kernel JSON/.o files under
 * ASCEND_CUSTOM_OPP_PATH, read by opbase itself -- so this registry stays empty: every lookup
 * fails and opbase falls back to the files, as it does for any custom operator package. */
#ifndef CANN_HOST_OP_BINARY_RESOURCE_MANAGER_H
#define CANN_HOST_OP_BINARY_RESOURCE_MANAGER_H
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>
#include <nlohmann/json.hpp>
#include "graph/ascend_string.h"
#include "graph/ge_error_codes.h"
namespace nnopbase {
struct Binary {
    const uint8_t* content = nullptr;
    uint32_t len = 0;
};
class OpBinaryResourceManager {
public:
    static OpBinaryResourceManager& GetInstance()
    {
        static OpBinaryResourceManager instance;
        return instance;
    }
    void AddOpFuncHandle(const ge::AscendString&, const std::vector<void*>&) {}
    uint32_t AddBinary(const ge::AscendString&,
                       const std::vector<std::tuple<const uint8_t*, const uint8_t*>>&) { return 0; }
    uint32_t AddRuntimeKB(const ge::AscendString&,
                          const std::vector<std::tuple<const uint8_t*, const uint8_t*>>&) { return 0; }
    const std::map<ge::AscendString, nlohmann::json>& GetAllOpBinaryDesc() const { return empty_; }
    uint32_t GetOpBinaryDesc(const ge::AscendString&, nlohmann::json&) const { return kNotFound; }
    uint32_t GetOpBinaryDescByPath(const char*, std::tuple<nlohmann::json, Binary>&) const { return kNotFound; }
    uint32_t GetOpBinaryDescByKey(const char*, std::tuple<nlohmann::json, Binary>&) const { return kNotFound; }
private:
    static constexpr uint32_t kNotFound = 1U;
    std::map<ge::AscendString, nlohmann::json> empty_;
};
}  // namespace nnopbase
#endif
