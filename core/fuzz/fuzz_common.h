/* Shared by the libFuzzer harnesses of core/fuzz (docs/fuzzing.md).
 * A broken invariant prints what broke and aborts, which libFuzzer reports
 * as a finding and saves as a crash-* artifact. */
#ifndef SEBT_FUZZ_COMMON_H
#define SEBT_FUZZ_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/grid.h"
#include "sebt/sebt.h"

#define FUZZ_CHECK(cond, ...)                                                          \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "fuzz invariant broken at %s:%d: %s\n  ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                              \
            fputc('\n', stderr);                                                       \
            abort();                                                                   \
        }                                                                              \
    } while (0)

/* An error from the library: a known code and a message that is a whole,
 * non-empty C string within its buffer. */
static inline void fuzz_check_error(sebt_status st, const sebt_error *e)
{
    FUZZ_CHECK(st > SEBT_OK && st <= SEBT_ERR_INTERNAL, "status %d", (int)st);
    FUZZ_CHECK(st != SEBT_ERR_INTERNAL, "internal error: %s", e->msg);
    FUZZ_CHECK(e->code == st, "error code %d, returned %d", (int)e->code, (int)st);
    FUZZ_CHECK(memchr(e->msg, '\0', sizeof e->msg) != NULL && e->msg[0] != '\0', "empty or unterminated message");
}

/* Same bits, where two NaNs count as equal (a missing bar is NaN, its
 * payload means nothing). */
static inline int fuzz_same_double(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

/* Every parameter of a and b, bit for bit. */
static inline int fuzz_same_params(const sebt_params *a, const sebt_params *b)
{
    for (int i = 0; i < SEBT_N_PARAMS; i++)
        if (!fuzz_same_double(sebt_params_get_double(a, i), sebt_params_get_double(b, i)))
            return 0;
    return 1;
}

/* The combos as a combos CSV with all 15 columns (what a person would
 * write to pin a grid down), in a malloc'd buffer. */
static inline char *fuzz_combos_csv(const sebt_params *c, size_t n, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    FUZZ_CHECK(f != NULL, "open_memstream");
    for (int i = 0; i < SEBT_N_PARAMS; i++)
        fprintf(f, "%s%s", i ? "," : "", sebt_param_table[i].name);
    fputc('\n', f);
    for (size_t k = 0; k < n; k++) {
        for (int i = 0; i < SEBT_N_PARAMS; i++) {
            char v[64];
            sebt_params_format(&c[k], i, v, sizeof v);
            fprintf(f, "%s%s", i ? "," : "", v);
        }
        fputc('\n', f);
    }
    fclose(f);
    return buf;
}

/* A combos list that parsed: every combo keeps its SPEC §2 rules, and
 * written as a combos CSV it reads back to the same bits. */
static inline void fuzz_check_combos(const sebt_params *c, size_t n)
{
    FUZZ_CHECK(n >= 1 && n <= SEBT_GRID_MAX_COMBOS, "%zu combos", n);
    for (size_t k = 0; k < n; k++) {
        sebt_error e = { 0 };
        FUZZ_CHECK(sebt_params_validate(&c[k], &e) == SEBT_OK, "combo %zu breaks a rule: %s", k, e.msg);
    }
    size_t len = 0;
    char *csv = fuzz_combos_csv(c, n, &len);
    sebt_params *back = NULL;
    size_t n_back = 0;
    sebt_error e = { 0 };
    sebt_status st = sebt_combos_parse("roundtrip.csv", csv, len, &back, &n_back, &e);
    FUZZ_CHECK(st == SEBT_OK, "the combos written as CSV do not read back: %s\n%s", e.msg, csv);
    FUZZ_CHECK(n_back == n, "%zu combos read back as %zu", n, n_back);
    for (size_t k = 0; k < n; k++)
        FUZZ_CHECK(fuzz_same_params(&c[k], &back[k]), "combo %zu changed in the round trip", k);
    free(back);
    free(csv);
}

#endif
