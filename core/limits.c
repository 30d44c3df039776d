#include <errno.h>
#include <stdlib.h>

#include "limits.h"
#include "sebt/sebt.h"

sebt_status sebt_env_limit(const char *name, size_t dflt, size_t *out, int *set, sebt_error *err)
{
    const char *v = getenv(name);
    *out = dflt;
    if (set)
        *set = 0;
    if (!v || !*v)
        return SEBT_OK;
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 10);
    /* strtoull skips blanks and takes a sign: " -5" would read as 2^64-5
     * and lift the limit. Only digits, from the first character. */
    if (*v < '0' || *v > '9' || end == v || *end || errno || n < 1 || n > (unsigned long long)SIZE_MAX)
        return sebt_fail(err, SEBT_ERR_USAGE, "environment variable %s='%s': expected a whole number >= 1", name,
                         v);
    *out = (size_t)n;
    if (set)
        *set = 1;
    return SEBT_OK;
}

/* Every limit variable the library and its backends read, checked whether
 * or not this run consults it: junk in one is a mistake in the job's set-up
 * that a run not needing that limit would otherwise hide. */
static const char *const limit_vars[] = {
    "SEBT_MAX_GAP_FILL", "SEBT_MAX_INFLATE_MB", "SEBT_MAX_COMBOS", "SEBT_MAX_STREAM_MB", "SEBT_FAST_CPU_MEMORY_MB",
};

__attribute__((visibility("default"))) sebt_status sebt_check_limit_env(sebt_error *err)
{
    for (size_t i = 0; i < sizeof limit_vars / sizeof limit_vars[0]; i++) {
        size_t v;
        sebt_status st = sebt_env_limit(limit_vars[i], 1, &v, NULL, err);
        if (st != SEBT_OK)
            return st;
    }
    return SEBT_OK;
}
