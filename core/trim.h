/* White space cut from both ends of a line read in place (grids, the GPU
 * crossover file). Internal to core; the CLI includes it as it does
 * ../core/oos_check.h. */
#ifndef SEBT_CORE_TRIM_H
#define SEBT_CORE_TRIM_H

#include <ctype.h>
#include <string.h>

/* Returns s past its leading white space, its trailing white space cut off
 * with NUL bytes. */
static inline char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

#endif
