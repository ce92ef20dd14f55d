/**
 * @file securec.h
 * @brief Host stand-in for the bounds-checked C library (libboundscheck's securec.h) that asc-tools'
 *        CPU-debug sources call; for tools/ascendc_check/run.py --run only. Not AscendC API.
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_SECUREC_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_SECUREC_H

#include <cstdarg>
#include <cstddef>
#include <cstdio>
#include <cstring>

typedef int errno_t;
#define EOK 0

inline errno_t memset_s(void* dest, size_t destMax, int c, size_t count)
{
    if (dest == nullptr || count > destMax) return 1;
    std::memset(dest, c, count);
    return EOK;
}

inline errno_t memcpy_s(void* dest, size_t destMax, const void* src, size_t count)
{
    if (dest == nullptr || src == nullptr || count > destMax) return 1;
    std::memcpy(dest, src, count);
    return EOK;
}

inline errno_t strcpy_s(char* dest, size_t destMax, const char* src)
{
    if (dest == nullptr || src == nullptr || std::strlen(src) + 1 > destMax) return 1;
    std::memcpy(dest, src, std::strlen(src) + 1);
    return EOK;
}

inline int sprintf_s(char* dest, size_t destMax, const char* format, ...)
{
    va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(dest, destMax, format, args);
    va_end(args);
    return n;
}

inline int snprintf_s(char* dest, size_t destMax, size_t count, const char* format, ...)
{
    va_list args;
    va_start(args, format);
    const int n = std::vsnprintf(dest, destMax < count + 1 ? destMax : count + 1, format, args);
    va_end(args);
    return n;
}

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_SECUREC_H
