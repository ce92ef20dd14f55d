/**
 * @file acl_op_compiler_standin.cpp
 * @brief libacl_op_compiler.so for the torch-npu run (tools/torch_npu_run): the compile options
 *        torch_npu sets and reads at device init (aclSetCompileopt / aclGetCompileopt*), kept as
 *        given. Nothing is ever compiled: an op without an aclnn function would reach aclop
 *        compilation (aclopCompileAndExecute*), which is not stood in and aborts, naming itself
 *        (gen_cann_absent.py). Defined against CANN's own declarations (the wheel's
 *        acl/acl_op_compiler.h), so a signature drift fails to compile.
 */
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "acl/acl_op_compiler.h"

#define STANDIN extern "C" __attribute__((visibility("default")))

namespace {
std::mutex g_mutex;
std::map<int, std::string> g_options;
}  // namespace

STANDIN aclError aclSetCompileopt(aclCompileOpt opt, const char* value)
{
    if (value == nullptr) {
        return ACL_ERROR_INVALID_PARAM;
    }
    std::lock_guard<std::mutex> lock(g_mutex);
    g_options[static_cast<int>(opt)] = value;
    return ACL_SUCCESS;
}

STANDIN size_t aclGetCompileoptSize(aclCompileOpt opt)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    const auto it = g_options.find(static_cast<int>(opt));
    return (it == g_options.end() ? 0 : it->second.size()) + 1;  // with the terminating NUL
}

STANDIN aclError aclGetCompileopt(aclCompileOpt opt, char* value, size_t length)
{
    std::lock_guard<std::mutex> lock(g_mutex);
    const auto it = g_options.find(static_cast<int>(opt));
    const std::string given = it == g_options.end() ? std::string() : it->second;
    if (value == nullptr || length < given.size() + 1) {
        return ACL_ERROR_INVALID_PARAM;
    }
    std::memcpy(value, given.c_str(), given.size() + 1);
    return ACL_SUCCESS;
}
