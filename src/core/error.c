/* SPDX-License-Identifier: MIT */
/* Thread-local last-error message: every failing public function records why. */
#include "canopy.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[1024];

const char *canopy_last_error(void) {
    return last_error;
}

void canopy_clear_error(void) {
    last_error[0] = '\0';
}

canopy_status canopy_fail(canopy_status s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return s;
}

const char *canopy_status_name(canopy_status s) {
    switch (s) {
    case CANOPY_OK:
        return "ok";
    case CANOPY_ERR_INVALID:
        return "invalid argument";
    case CANOPY_ERR_IO:
        return "I/O error";
    case CANOPY_ERR_FORMAT:
        return "format error";
    case CANOPY_ERR_NOMEM:
        return "out of memory";
    case CANOPY_ERR_UNSUPPORTED:
        return "unsupported";
    case CANOPY_ERR_DEVICE:
        return "device error";
    case CANOPY_ERR_INTERNAL:
        return "internal error";
    }
    return "unknown status";
}
