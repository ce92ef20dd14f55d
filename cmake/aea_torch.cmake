# torch for the torch extension (_C), as torch.utils.cpp_extension.CppExtension builds one: the
# include directories, the libraries (c10, torch, torch_cpu, torch_python) and the compile
# definitions that torch itself reports, asked of the Python running the build. Not
# find_package(Torch): a CUDA build of torch (what `pip install torch` gives on x86_64) makes its
# Caffe2Config.cmake look for the CUDA toolkit and stop without one, and _C needs no CUDA (docs:
# README, "Supported versions"). Defines:
#   aea_torch           INTERFACE target: include directories (as system headers), definitions,
#                       libraries
#   AEA_TORCH_VERSION   torch.__version__ without the local part (2.13.0)
#   AEA_TORCH_LIB_DIR   torch/lib
# Needs Python_EXECUTABLE (the top-level file finds it and checks that it imports torch).
if(TARGET aea_torch)
  return()
endif()
set(_aea_torch_query [=[
import os, torch, torch.utils.cpp_extension as ext
c = torch._C
print(torch.__version__.split("+")[0])
print(",".join(ext.include_paths()))
print(os.path.join(os.path.dirname(torch.__file__), "lib"))
print(int(c._GLIBCXX_USE_CXX11_ABI))
# torch < 2.8 names the pybind11 ABI its own bindings were built with; CppExtension passes it on
# so that the extension's pybind11 shares torch's type registry (newer torch: none)
print(",".join(f'{n}="{getattr(c, "_" + n)}"' for n in
               ("PYBIND11_COMPILER_TYPE", "PYBIND11_STDLIB", "PYBIND11_BUILD_ABI")
               if getattr(c, "_" + n, None)))
]=])
execute_process(COMMAND "${Python_EXECUTABLE}" -c "${_aea_torch_query}"
                OUTPUT_VARIABLE _aea_torch_out RESULT_VARIABLE _aea_torch_rc
                ERROR_VARIABLE _aea_torch_err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT _aea_torch_rc EQUAL 0)
  message(FATAL_ERROR "ascend_ema_adam: asking ${Python_EXECUTABLE} about its torch failed:\n${_aea_torch_err}")
endif()
string(REPLACE "\n" ";" _aea_torch_lines "${_aea_torch_out}")
list(LENGTH _aea_torch_lines _aea_n)
if(_aea_n LESS 4)
  message(FATAL_ERROR "ascend_ema_adam: unexpected answer about torch:\n${_aea_torch_out}")
endif()
list(GET _aea_torch_lines 0 AEA_TORCH_VERSION)
list(GET _aea_torch_lines 1 _aea_torch_includes)
string(REPLACE "," ";" _aea_torch_includes "${_aea_torch_includes}")
list(GET _aea_torch_lines 2 AEA_TORCH_LIB_DIR)
list(GET _aea_torch_lines 3 _aea_torch_cxx11_abi)
set(_aea_torch_pybind11_abi "")
if(_aea_n GREATER 4)
  list(GET _aea_torch_lines 4 _aea_torch_pybind11_abi)
  string(REPLACE "," ";" _aea_torch_pybind11_abi "${_aea_torch_pybind11_abi}")
endif()

# _C links static libraries (tiling) compiled without torch's definitions: they must agree with torch
# on the std::string / std::list ABI, or a structure holding one would be laid out two ways in one
# module (a link error at best, memory read with the other layout at worst). Stop here instead.
include(CheckCXXSourceCompiles)
set(CMAKE_REQUIRED_QUIET ON)
check_cxx_source_compiles("#include <string>
#if _GLIBCXX_USE_CXX11_ABI != ${_aea_torch_cxx11_abi}
#error torch's ABI differs
#endif
int main() { return 0; }" AEA_COMPILER_ABI_IS_TORCH_${_aea_torch_cxx11_abi})
unset(CMAKE_REQUIRED_QUIET)
if(NOT AEA_COMPILER_ABI_IS_TORCH_${_aea_torch_cxx11_abi})
  message(FATAL_ERROR "ascend_ema_adam: torch ${AEA_TORCH_VERSION} was built with "
          "_GLIBCXX_USE_CXX11_ABI=${_aea_torch_cxx11_abi} and ${CMAKE_CXX_COMPILER} defaults to the "
          "other libstdc++ ABI; build with a compiler whose default matches torch's (any g++ >= 5 "
          "without --with-default-libstdcxx-abi=gcc4-compatible for torch >= 2.7)")
endif()

add_library(aea_torch INTERFACE IMPORTED)
target_include_directories(aea_torch SYSTEM INTERFACE ${_aea_torch_includes})
# CppExtension's definitions (its TORCH_EXTENSION_NAME is the module's name, set by the target).
target_compile_definitions(aea_torch INTERFACE _GLIBCXX_USE_CXX11_ABI=${_aea_torch_cxx11_abi}
                           TORCH_API_INCLUDE_EXTENSION_H ${_aea_torch_pybind11_abi})
set(_aea_torch_libs "")
foreach(lib c10 torch torch_cpu torch_python)
  set(_aea_lib "${AEA_TORCH_LIB_DIR}/lib${lib}.so")
  if(NOT EXISTS "${_aea_lib}")
    message(FATAL_ERROR "ascend_ema_adam: ${_aea_lib} not found (torch ${AEA_TORCH_VERSION})")
  endif()
  list(APPEND _aea_torch_libs "${_aea_lib}")
endforeach()
target_link_libraries(aea_torch INTERFACE ${_aea_torch_libs})
# libstdc++ is the first library a module linked to torch needs (DT_NEEDED): the dynamic linker
# looks a symbol up in the module's libraries in that order, and torch's libraries export copies
# of libstdc++'s own functions (from the toolchain torch is built with: std::ostringstream's
# constructor, exception_ptr's reference counting, ...; 16 to 161 of them per library, torch 2.7.1
# to 2.13). Listed after torch, the module's calls of those bind to torch's copies; first, to
# libstdc++'s (issue 35; tests/python/ops/test_error_paths.py checks every binding).
target_link_options(aea_torch INTERFACE
                    "SHELL:-Wl,--push-state,--no-as-needed -lstdc++ -Wl,--pop-state")
message(STATUS "ascend_ema_adam: torch ${AEA_TORCH_VERSION} in ${AEA_TORCH_LIB_DIR} "
               "(C++11 ABI ${_aea_torch_cxx11_abi}${_aea_torch_pybind11_abi})")
