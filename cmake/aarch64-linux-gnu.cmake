# Cross builds for aarch64 Linux (Kunpeng 920 hosts of Atlas A2/A3) with Debian's cross GCC
# (`apt-get install g++-aarch64-linux-gnu qemu-user`; g++-11-aarch64-linux-gnu for GCC 11):
#   cmake -S . -B build/aarch64 -G Ninja -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# ctest then runs the aarch64 test programs under qemu-user (CMAKE_CROSSCOMPILING_EMULATOR), with no
# binfmt registration. Settings (environment variables, read by every configure step CMake runs):
#   AEA_AARCH64_GCC     the compiler's version suffix: 11 for aarch64-linux-gnu-g++-11 (default:
#                       Debian's default cross compiler, aarch64-linux-gnu-g++)
#   AEA_AARCH64_SYSROOT where qemu finds the aarch64 loader and libraries (default
#                       /usr/aarch64-linux-gnu, the cross compiler's own; `make aarch64-check` gives
#                       its Debian arm64 root, which also holds CPython)
# The torch extension needs Python_EXECUTABLE: an aarch64 CPython with an aarch64 torch (under
# qemu: tools/aarch64/run.sh makes one).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(_aea_gcc_suffix "")
if(DEFINED ENV{AEA_AARCH64_GCC} AND NOT "$ENV{AEA_AARCH64_GCC}" STREQUAL "")
  set(_aea_gcc_suffix "-$ENV{AEA_AARCH64_GCC}")
endif()
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc${_aea_gcc_suffix})
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++${_aea_gcc_suffix})
set(CMAKE_OBJDUMP aarch64-linux-gnu-objdump CACHE FILEPATH "objdump for aarch64 objects")

set(_aea_sysroot /usr/aarch64-linux-gnu)
if(DEFINED ENV{AEA_AARCH64_SYSROOT} AND NOT "$ENV{AEA_AARCH64_SYSROOT}" STREQUAL "")
  set(_aea_sysroot "$ENV{AEA_AARCH64_SYSROOT}")
endif()
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L ${_aea_sysroot})

# Libraries and headers of the target (the cross compiler's own, and the sysroot's); programs of
# the build machine (ninja, python for the code generators).
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu ${_aea_sysroot})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# A library found in the sysroot (CANN's host stack links its protobuf) needs its own dependencies
# (libz) found there too when the linker follows them.
if(NOT _aea_sysroot STREQUAL "/usr/aarch64-linux-gnu")
  set(_aea_rpath_link "-Wl,-rpath-link,${_aea_sysroot}/usr/lib/aarch64-linux-gnu:${_aea_sysroot}/lib/aarch64-linux-gnu")
  set(CMAKE_EXE_LINKER_FLAGS_INIT "${_aea_rpath_link}")
  set(CMAKE_SHARED_LINKER_FLAGS_INIT "${_aea_rpath_link}")
  set(CMAKE_MODULE_LINKER_FLAGS_INIT "${_aea_rpath_link}")
endif()
