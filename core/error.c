#include <stdio.h>
#include <string.h>

#include "sebt/sebt.h"

sebt_status sebt_fail(sebt_error *err, sebt_status code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

void sebt_error_clear(sebt_error *err)
{
    if (err) {
        err->code = SEBT_OK;
        err->msg[0] = '\0';
    }
}

const char *sebt_status_name(sebt_status code)
{
    switch (code) {
    case SEBT_OK: return "ok";
    case SEBT_ERR_USAGE: return "usage";
    case SEBT_ERR_INPUT: return "input";
    case SEBT_ERR_PARAM: return "parameter";
    case SEBT_ERR_IO: return "io";
    case SEBT_ERR_NOMEM: return "out of memory";
    case SEBT_ERR_NODEVICE: return "no device";
    case SEBT_ERR_UNAVAILABLE: return "unavailable";
    case SEBT_ERR_INTERNAL: return "internal";
    case SEBT_ERR_PROTOCOL: return "protocol";
    case SEBT_ERR_TIMEOUT: return "timeout";
    case SEBT_ERR_VERIFY: return "verify";
    }
    return "unknown";
}

char *sebt_text_visible(const void *p, size_t n, char *out, size_t max)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *b = p;
    size_t o = 0;
    for (size_t i = 0; i < n && o + 5 < max; i++) {
        unsigned char c = b[i];
        if (c >= 32 && c != 127) {
            out[o++] = (char)c;
        } else if (c == '\n' || c == '\r' || c == '\t') {
            out[o++] = '\\';
            out[o++] = c == '\n' ? 'n' : c == '\r' ? 'r' : 't';
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    if (max)
        out[o] = '\0';
    return out;
}
