/* Reading a sweep's CSV row back (include/sebt/sweep_proof.h): what a
 * proof reads from the file it checks, and what `sebt merge` reads from
 * shards. The inverse of sebt_sweep_csv_row_ex. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"
#include "sebt/sweep_proof.h"

static bool parse_u64_field(const char *s, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno)
        return false;
    *out = v;
    return true;
}

static bool parse_double_field(const char *s, double *out)
{
    if (strcmp(s, "nan") == 0) {
        *out = NAN;
        return true;
    }
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end)
        return false;
    *out = v;
    return true;
}

/* The extra columns of a row (n: the analysis, then the relative ones),
 * fields[0..n), into a. A relative count may be -1 (undefined). */
static bool parse_analysis(char *const *fields, int n, sebt_trade_stats *a, char *why, size_t why_size)
{
    memset(a, 0, sizeof *a);
    for (int i = 0; i < n; i++) {
        uint64_t u = 0;
        double v = 0;
        bool count = sebt_sweep_analysis_is_count(i) && i < SEBT_SWEEP_N_ANALYSIS;
        bool ok = count ? parse_u64_field(fields[i], &u) : parse_double_field(fields[i], &v);
        if (ok && sebt_sweep_analysis_is_count(i) && !count)
            ok = v == (double)(int64_t)v;
        if (!ok) {
            snprintf(why, why_size, "%s '%s' is not a %s", sebt_sweep_analysis_name(i), fields[i],
                     count ? "whole number" : "number");
            return false;
        }
        sebt_sweep_analysis_set(a, i, count ? (double)u : v);
    }
    return true;
}

bool sebt_sweep_csv_row_read(char *line, int cols, uint64_t *combo, sebt_params *p, sebt_sweep_record *rec,
                             char *why, size_t why_size)
{
    enum { N_FIELDS = 1 + SEBT_N_PARAMS + SEBT_N_METRICS + 2, MAX_FIELDS = N_FIELDS + SEBT_SWEEP_N_EXTRA };
    char *fields[MAX_FIELDS];
    int extra = sebt_sweep_extra_count(cols);
    size_t nf = 0, want = N_FIELDS + (size_t)extra;
    memset(rec, 0, sizeof *rec);
    rec->has_analysis = extra > 0;
    sebt_result res, *r = &res;
    for (char *tok = line;;) {
        char *c = strchr(tok, ',');
        if (c)
            *c = '\0';
        if (nf < MAX_FIELDS)
            fields[nf] = tok;
        nf++;
        if (!c)
            break;
        tok = c + 1;
    }
    if (nf != want) {
        snprintf(why, why_size, "%zu fields, expected %zu", nf, want);
        return false;
    }
    if (extra && !parse_analysis(fields + N_FIELDS, extra, &rec->analysis, why, why_size))
        return false;
    uint64_t u;
    if (!parse_u64_field(fields[0], &u)) {
        snprintf(why, why_size, "combo '%s' is not a whole number", fields[0]);
        return false;
    }
    *combo = u;
    rec->combo = u;
    *p = sebt_params_default();
    sebt_error e = { 0 };
    for (int i = 0; i < SEBT_N_PARAMS; i++)
        if (sebt_params_set(p, sebt_param_table[i].name, fields[1 + i], &e) != SEBT_OK) {
            snprintf(why, why_size, "%s", e.msg);
            return false;
        }
    memset(r, 0, sizeof *r);
    const char *nfield = fields[1 + SEBT_N_PARAMS];
    char *end;
    errno = 0;
    long long n = strtoll(nfield, &end, 10);
    if (!*nfield || *end || errno) {
        snprintf(why, why_size, "n '%s' is not a whole number", nfield);
        return false;
    }
    r->metrics.n = (int64_t)n;
    double *dst[] = { &r->metrics.win_rate, &r->metrics.avg_r, &r->metrics.total_pnl, &r->metrics.max_dd,
                      &r->metrics.sharpe };
    for (int i = 0; i < 5; i++) {
        const char *s = fields[2 + SEBT_N_PARAMS + i];
        if (!parse_double_field(s, dst[i])) {
            snprintf(why, why_size, "%s '%s' is not a number", sebt_metric_name(1 + i), s);
            return false;
        }
    }
    const char *open = fields[N_FIELDS - 2];
    if (strcmp(open, "0") != 0 && strcmp(open, "1") != 0) {
        snprintf(why, why_size, "open_at_end '%s' is not 0 or 1", open);
        return false;
    }
    r->open_at_end.open = open[0] == '1';
    if (!parse_u64_field(fields[N_FIELDS - 1], &u)) {
        snprintf(why, why_size, "valid_bars '%s' is not a whole number", fields[N_FIELDS - 1]);
        return false;
    }
    r->valid_bars = (size_t)u;
    rec->metrics = r->metrics;
    rec->valid_bars = u;
    rec->open_at_end = r->open_at_end.open ? 1 : 0;
    return true;
}
