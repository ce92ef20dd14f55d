/**
 * @file dlog_pub.h
 * @brief Host stand-in for CANN's logging header (dlog) used by asc-tools' API checkers; warnings and
 *        errors go to stderr. For tools/ascendc_check/run.py --run only. Not AscendC API.
 */
#ifndef ASCEND_EMA_ADAM_ASCENDC_CHECK_DLOG_PUB_H
#define ASCEND_EMA_ADAM_ASCENDC_CHECK_DLOG_PUB_H

#include <cstdio>

enum { ASCENDCKERNEL = 0 };

#define dlog_debug(module, fmt, ...) ((void)(module))
#define dlog_info(module, fmt, ...) ((void)(module))
#define dlog_warn(module, fmt, ...) std::fprintf(stderr, "[dlog warn] " fmt, ##__VA_ARGS__)
#define dlog_error(module, fmt, ...) std::fprintf(stderr, "[dlog error] " fmt, ##__VA_ARGS__)

#endif  // ASCEND_EMA_ADAM_ASCENDC_CHECK_DLOG_PUB_H
