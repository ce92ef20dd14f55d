/* Stand-in for libboundscheck's securec.h (no public repository carries it): the declarations
   CANN's headers and sources call. The one copy: tools/cann_registration_check/run.sh, tools/cann_op_build/run.sh
   and tools/cann_host compile against it. */
#ifndef CANN_HOST_SECUREC_H
#define CANN_HOST_SECUREC_H
#include <stdarg.h>
#include <stddef.h>
typedef int errno_t;
#define EOK 0
/* libboundscheck's limits (securec.h): 2 GiB for memory, 2^29 characters for strings */
#define SECUREC_MEM_MAX_LEN (0x7fffffffUL)
#define SECUREC_STRING_MAX_LEN (0x1fffffffUL)
#ifdef __cplusplus
extern "C" {
#endif
errno_t memcpy_s(void* dest, size_t destMax, const void* src, size_t count);
errno_t memmove_s(void* dest, size_t destMax, const void* src, size_t count);
errno_t memset_s(void* dest, size_t destMax, int c, size_t count);
errno_t strcpy_s(char* dest, size_t destMax, const char* src);
errno_t strncpy_s(char* dest, size_t destMax, const char* src, size_t count);
int vsnprintf_s(char* dest, size_t destMax, size_t count, const char* format, va_list argList);
int snprintf_s(char* dest, size_t destMax, size_t count, const char* format, ...);
int sprintf_s(char* dest, size_t destMax, const char* format, ...);
int sscanf_s(const char* buffer, const char* format, ...);
errno_t strcat_s(char* dest, size_t destMax, const char* src);
errno_t strncat_s(char* dest, size_t destMax, const char* src, size_t count);
#ifdef __cplusplus
}
#endif
#endif
