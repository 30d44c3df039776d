/* A sweep's rows (CSV and npy), its metrics and ranking, and the test that
 * a result can be written at all: one definition for `sebt sweep`, `sebt
 * merge` and every caller of the library's streamed sweep. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sebt/number.h"
#include "sebt/sebt.h"
#include "sebt/sweep.h"
#include "test_faults.h"

static const char *const metric_names[SEBT_N_METRICS] = { "n", "win_rate", "avg_r", "total_pnl", "max_dd",
                                                          "sharpe" };

const char *sebt_metric_name(int metric)
{
    return metric >= 0 && metric < SEBT_N_METRICS ? metric_names[metric] : NULL;
}

int sebt_metric_index(const char *name)
{
    for (int i = 0; name && i < SEBT_N_METRICS; i++)
        if (strcmp(name, metric_names[i]) == 0)
            return i;
    return -1;
}

double sebt_metric_value(const sebt_metrics *m, int metric)
{
    switch (metric) {
    case SEBT_METRIC_N: return (double)m->n;
    case SEBT_METRIC_WIN_RATE: return m->win_rate;
    case SEBT_METRIC_AVG_R: return m->avg_r;
    case SEBT_METRIC_TOTAL_PNL: return m->total_pnl;
    case SEBT_METRIC_MAX_DD: return m->max_dd;
    default: return m->sharpe;
    }
}

/* The ranking: higher first, NaN last, ties by input index. */
static int rank_values(double va, uint64_t a, double vb, uint64_t b)
{
    int na = isnan(va), nb = isnan(vb);
    if (na != nb)
        return na - nb;
    if (!na && va != vb)
        return va > vb ? -1 : 1;
    return a < b ? -1 : a > b;
}

int sebt_rank_compare(const sebt_metrics *ma, uint64_t a, const sebt_metrics *mb, uint64_t b, int metric)
{
    return rank_values(sebt_metric_value(ma, metric), a, sebt_metric_value(mb, metric), b);
}

/* ---- the analysis columns ------------------------------------------------------ */

/* The analysis column i of a: its kind (true: a count) and value. */
static const struct {
    const char *name;
    bool count;
} analysis_columns[SEBT_SWEEP_N_ANALYSIS] = {
    { "exits_stop_gap", true }, { "exits_stop", true }, { "exits_tp", true }, { "exits_time", true },
    { "gross_profit", false }, { "gross_loss", false }, { "profit_factor", false },
    { "bars_in_market", true }, { "exposure", false }, { "sharpe_annual", false },
};
_Static_assert(SEBT_EXIT_KINDS == 4, "one exits_ column per sebt_exit_reason");
/* The columns after the exit counts, by their index in analysis_columns. */
enum { A_GROSS_PROFIT = SEBT_EXIT_KINDS, A_GROSS_LOSS, A_PROFIT_FACTOR, A_BARS_IN_MARKET, A_EXPOSURE, A_SHARPE_ANNUAL };

/* The relative columns: sebt_relative_fields from total_return_pct on
 * (capital, fraction and final_equity say nothing a percentage does not). */
#define RELATIVE_SKIPPED 3
_Static_assert(SEBT_N_RELATIVE - RELATIVE_SKIPPED == SEBT_SWEEP_N_RELATIVE, "one relative column per measure");

static int relative_field(int j)
{
    return j + RELATIVE_SKIPPED;
}

int sebt_sweep_extra_count(int cols)
{
    return cols >= SEBT_COLS_RELATIVE ? SEBT_SWEEP_N_EXTRA : cols == SEBT_COLS_ANALYSIS ? SEBT_SWEEP_N_ANALYSIS : 0;
}

int sebt_sweep_row_cols(const sebt_trade_stats *a)
{
    return !a ? SEBT_COLS_PLAIN : a->has_relative ? SEBT_COLS_RELATIVE : SEBT_COLS_ANALYSIS;
}

const char *sebt_sweep_analysis_name(int i)
{
    if (i >= SEBT_SWEEP_N_ANALYSIS && i < SEBT_SWEEP_N_EXTRA)
        return sebt_relative_fields[relative_field(i - SEBT_SWEEP_N_ANALYSIS)].name;
    return i >= 0 && i < SEBT_SWEEP_N_ANALYSIS ? analysis_columns[i].name : NULL;
}

bool sebt_sweep_analysis_is_count(int i)
{
    if (i >= SEBT_SWEEP_N_ANALYSIS && i < SEBT_SWEEP_N_EXTRA)
        return sebt_relative_fields[relative_field(i - SEBT_SWEEP_N_ANALYSIS)].count;
    return i >= 0 && i < SEBT_SWEEP_N_ANALYSIS && analysis_columns[i].count;
}

static void *relative_at(sebt_trade_stats *a, int i)
{
    return (char *)&a->relative + sebt_relative_fields[relative_field(i - SEBT_SWEEP_N_ANALYSIS)].offset;
}

void sebt_sweep_analysis_set(sebt_trade_stats *a, int i, double v)
{
    if (i >= SEBT_SWEEP_N_ANALYSIS) {
        a->has_relative = true;
        if (sebt_sweep_analysis_is_count(i)) {
            int64_t c = (int64_t)v;
            memcpy(relative_at(a, i), &c, sizeof c);
        } else {
            memcpy(relative_at(a, i), &v, sizeof v);
        }
        return;
    }
    switch (i) {
    case A_GROSS_PROFIT: a->gross_profit = v; break;
    case A_GROSS_LOSS: a->gross_loss = v; break;
    case A_PROFIT_FACTOR: a->profit_factor = v; break;
    case A_BARS_IN_MARKET: a->bars_in_market = (int64_t)v; break;
    case A_EXPOSURE: a->exposure = v; break;
    case A_SHARPE_ANNUAL: a->sharpe_annual = v; break;
    default: a->exits[i] = (int64_t)v; break;
    }
}

static int64_t analysis_count(const sebt_trade_stats *a, int i)
{
    if ((i == SEBT_EXIT_STOP || i == SEBT_EXIT_TP) && SEBT_FAULT("exits_stop_and_tp_swapped"))
        i = SEBT_EXIT_STOP + SEBT_EXIT_TP - i;
    return i < SEBT_EXIT_KINDS ? a->exits[i] : a->bars_in_market;
}

double sebt_sweep_analysis_value(const sebt_trade_stats *a, int i)
{
    if (i >= SEBT_SWEEP_N_ANALYSIS)
        return sebt_relative_value(&a->relative, relative_field(i - SEBT_SWEEP_N_ANALYSIS));
    switch (i) {
    case A_GROSS_PROFIT: return a->gross_profit;
    case A_GROSS_LOSS: return a->gross_loss;
    case A_PROFIT_FACTOR: return a->profit_factor;
    case A_EXPOSURE: return a->exposure;
    case A_SHARPE_ANNUAL: return a->sharpe_annual;
    default: return (double)analysis_count(a, i);
    }
}

/* ---- CSV --------------------------------------------------------------------- */

/* Appends text to b (size bytes) at *k; false when it does not fit. */
static bool append(char *b, size_t size, size_t *k, const char *text)
{
    size_t len = strlen(text);
    if (len >= size - *k)
        return false;
    memcpy(b + *k, text, len);
    *k += len;
    return true;
}

size_t sebt_sweep_csv_header_ex(char *b, size_t size, int cols)
{
    size_t k = 0;
    bool ok = size > 0 && append(b, size, &k, "combo");
    for (int i = 0; ok && i < SEBT_N_PARAMS; i++)
        ok = append(b, size, &k, ",") && append(b, size, &k, sebt_param_table[i].name);
    for (int i = 0; ok && i < SEBT_N_METRICS; i++)
        ok = append(b, size, &k, ",") && append(b, size, &k, metric_names[i]);
    ok = ok && append(b, size, &k, ",open_at_end,valid_bars");
    for (int i = 0; ok && i < sebt_sweep_extra_count(cols); i++)
        ok = append(b, size, &k, ",") && append(b, size, &k, sebt_sweep_analysis_name(i));
    ok = ok && append(b, size, &k, "\n");
    return ok ? k : 0;
}

size_t sebt_sweep_csv_header(char *b, size_t size)
{
    return sebt_sweep_csv_header_ex(b, size, false);
}

/* One field of p as sebt_params_format writes it (%d, shortest double,
 * true|false), without its snprintf. */
static size_t put_param(char *b, const sebt_params *p, int i)
{
    double v = sebt_params_get_double(p, i);
    switch (sebt_param_table[i].type) {
    case SEBT_PARAM_INT: {
        long long x = (long long)v;
        size_t k = 0;
        if (x < 0) {
            b[k++] = '-';
            return k + sebt_format_u64(0ull - (unsigned long long)x, b + k);
        }
        return sebt_format_u64((unsigned long long)x, b);
    }
    case SEBT_PARAM_DOUBLE:
        return sebt_format_double(v, b);
    default:
        memcpy(b, v != 0.0 ? "true" : "false", v != 0.0 ? 4 : 5);
        return v != 0.0 ? 4 : 5;
    }
}

/* The text of each parameter column as last written by this thread: a
 * sweep's rows repeat each parameter's few values, mostly in runs, and the
 * shortest digits of a double cost more than comparing its bits. Per
 * thread, so any thread may format rows. */
static _Thread_local struct {
    uint64_t bits;
    uint8_t len, valid;
    char text[SEBT_DOUBLE_CHARS];
} param_cache[SEBT_N_PARAMS];

static size_t put_cached_param(char *b, const sebt_params *p, int i)
{
    double v = sebt_params_get_double(p, i);
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    if (!param_cache[i].valid || param_cache[i].bits != bits) {
        size_t len = put_param(param_cache[i].text, p, i);
        param_cache[i].bits = bits;
        param_cache[i].len = (uint8_t)len;
        param_cache[i].valid = 1;
    }
    memcpy(b, param_cache[i].text, param_cache[i].len);
    return param_cache[i].len;
}

int sebt_sweep_rank_key(const char *name)
{
    int m = sebt_metric_index(name);
    for (int i = 0; name && m < 0 && i < SEBT_SWEEP_N_EXTRA; i++)
        if (strcmp(name, sebt_sweep_analysis_name(i)) == 0)
            m = SEBT_N_METRICS + i;
    return m;
}

const char *sebt_sweep_rank_name(int key)
{
    return key < SEBT_N_METRICS ? sebt_metric_name(key) : sebt_sweep_analysis_name(key - SEBT_N_METRICS);
}

static double record_value(const sebt_sweep_record *r, int key)
{
    return key < SEBT_N_METRICS ? sebt_metric_value(&r->metrics, key)
                                : sebt_sweep_analysis_value(&r->analysis, key - SEBT_N_METRICS);
}

int sebt_sweep_record_compare(const sebt_sweep_record *a, const sebt_sweep_record *b, int key)
{
    return rank_values(record_value(a, key), a->combo, record_value(b, key), b->combo);
}

static size_t put_i64(char *b, int64_t v)
{
    if (v >= 0)
        return sebt_format_u64((unsigned long long)v, b);
    b[0] = '-';
    return 1 + sebt_format_u64(0ull - (unsigned long long)v, b + 1);
}

size_t sebt_sweep_csv_row_ex(char *b, uint64_t combo, const sebt_params *p, const sebt_result *r,
                             const sebt_trade_stats *a)
{
    size_t k = sebt_format_u64(combo, b);
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        b[k++] = ',';
        k += put_cached_param(b + k, p, i);
    }
    b[k++] = ',';
    k += put_i64(b + k, r->metrics.n);
    const double v[] = { r->metrics.win_rate, r->metrics.avg_r, r->metrics.total_pnl, r->metrics.max_dd,
                         r->metrics.sharpe };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        b[k++] = ',';
        k += sebt_format_double(v[i], b + k);
    }
    b[k++] = ',';
    b[k++] = r->open_at_end.open ? '1' : '0';
    b[k++] = ',';
    k += sebt_format_u64(r->valid_bars, b + k);
    for (int i = 0; i < sebt_sweep_extra_count(sebt_sweep_row_cols(a)); i++) {
        b[k++] = ',';
        k += i < SEBT_SWEEP_N_ANALYSIS && analysis_columns[i].count ? put_i64(b + k, analysis_count(a, i))
             : sebt_sweep_analysis_is_count(i) ? put_i64(b + k, (int64_t)sebt_sweep_analysis_value(a, i))
                                               : sebt_format_double(sebt_sweep_analysis_value(a, i), b + k);
    }
    b[k++] = '\n';
    return k;
}

size_t sebt_sweep_csv_row(char *b, uint64_t combo, const sebt_params *p, const sebt_result *r)
{
    return sebt_sweep_csv_row_ex(b, combo, p, r, NULL);
}

/* ---- npy --------------------------------------------------------------------- */

/* A column's dtype and bytes; the parameters' come from sebt_param_table. */
static const char *param_dtype(int i, size_t *bytes)
{
    switch (sebt_param_table[i].type) {
    case SEBT_PARAM_INT: *bytes = 4; return "<i4";
    case SEBT_PARAM_DOUBLE: *bytes = 8; return "<f8";
    default: *bytes = 1; return "|b1";
    }
}

size_t sebt_sweep_npy_row_bytes_ex(int cols)
{
    size_t k = 8, b;   /* combo */
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        param_dtype(i, &b);
        k += b;
    }
    /* n, five doubles, open_at_end, valid_bars; each analysis column is 8 */
    return k + 8 + 5 * 8 + 1 + 8 + 8 * (size_t)sebt_sweep_extra_count(cols);
}

size_t sebt_sweep_npy_row_bytes(void)
{
    return sebt_sweep_npy_row_bytes_ex(false);
}

size_t sebt_sweep_npy_header(char *b, uint64_t n_rows)
{
    return sebt_sweep_npy_header_ex(b, n_rows, false);
}

size_t sebt_sweep_npy_header_ex(char *b, uint64_t n_rows, int cols)
{
    /* 10 bytes of preamble (magic, version 1.0, header length), the dict,
     * spaces, '\n'; numpy reads the dict with ast.literal_eval. */
    size_t k = 10, bytes;
    k += (size_t)sprintf(b + k, "{'descr': [('combo', '<u8')");
    for (int i = 0; i < SEBT_N_PARAMS; i++)
        k += (size_t)sprintf(b + k, ", ('%s', '%s')", sebt_param_table[i].name, param_dtype(i, &bytes));
    k += (size_t)sprintf(b + k, ", ('n', '<i8')");
    for (int i = 1; i < SEBT_N_METRICS; i++)
        k += (size_t)sprintf(b + k, ", ('%s', '<f8')", metric_names[i]);
    k += (size_t)sprintf(b + k, ", ('open_at_end', '|u1'), ('valid_bars', '<u8')");
    for (int i = 0; i < sebt_sweep_extra_count(cols); i++)
        k += (size_t)sprintf(b + k, ", ('%s', '%s')", sebt_sweep_analysis_name(i),
                             sebt_sweep_analysis_is_count(i) ? "<i8" : "<f8");
    k += (size_t)sprintf(b + k, "], 'fortran_order': False, 'shape': (%" PRIu64 ",), }", n_rows);
    size_t total = (k + 1 + 63) / 64 * 64;   /* + '\n' */
    memset(b + k, ' ', total - 1 - k);
    b[total - 1] = '\n';
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (char)((total - 10) & 0xff);
    b[9] = (char)((total - 10) >> 8);
    return total;
}

static size_t put_le(unsigned char *b, uint64_t v, size_t bytes)
{
    for (size_t i = 0; i < bytes; i++)
        b[i] = (unsigned char)(v >> (8 * i));
    return bytes;
}

static size_t put_f8(unsigned char *b, double v)
{
    uint64_t u = UINT64_C(0x7ff8000000000000);   /* every NaN as the one the CSV's "nan" reads back to */
    if (!isnan(v))
        memcpy(&u, &v, sizeof u);
    return put_le(b, u, 8);
}

/* A parameter's field in its npy type (the header's '<i4', '<f8', '|b1'). */
static size_t put_param_INT(unsigned char *b, int32_t v)
{
    return put_le(b, (uint32_t)v, 4);
}

static size_t put_param_DOUBLE(unsigned char *b, double v)
{
    return put_f8(b, v);
}

static size_t put_param_BOOL(unsigned char *b, bool v)
{
    b[0] = v;
    return 1;
}

size_t sebt_sweep_npy_row(unsigned char *b, uint64_t combo, const sebt_params *p, const sebt_result *r)
{
    return sebt_sweep_npy_row_ex(b, combo, p, r, NULL);
}

size_t sebt_sweep_npy_row_ex(unsigned char *b, uint64_t combo, const sebt_params *p, const sebt_result *r,
                             const sebt_trade_stats *a)
{
    size_t k = put_le(b, combo, 8);
    /* Field by field from the declaration: a row is written for every
     * combo of a sweep, and a lookup per field cost it a few percent. */
#define SEBT_PARAM(name, ctype, kind, min, min_excluded, def, role) k += put_param_##kind(b + k, p->name);
#include "sebt/strategy.def"
    k += put_le(b + k, (uint64_t)r->metrics.n, 8);
    const double v[] = { r->metrics.win_rate, r->metrics.avg_r, r->metrics.total_pnl, r->metrics.max_dd,
                         r->metrics.sharpe };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        k += put_f8(b + k, v[i]);
    b[k++] = r->open_at_end.open ? 1 : 0;
    k += put_le(b + k, (uint64_t)r->valid_bars, 8);
    for (int i = 0; i < sebt_sweep_extra_count(sebt_sweep_row_cols(a)); i++)
        k += i < SEBT_SWEEP_N_ANALYSIS && analysis_columns[i].count
                 ? put_le(b + k, (uint64_t)analysis_count(a, i), 8)
             : sebt_sweep_analysis_is_count(i) ? put_le(b + k, (uint64_t)(int64_t)sebt_sweep_analysis_value(a, i), 8)
                                               : put_f8(b + k, sebt_sweep_analysis_value(a, i));
    return k;
}

/* ---- results that are not finite (docs/decisions.md) --------------------- */

static bool first_bad(const double *v, const char *const *names, size_t n, const char **name, double *val)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) {
            *name = names[i];
            *val = v[i];
            return true;
        }
    return false;
}

/* The first value of r that does not fit a double: its name, value and
 * where it is (a trade, the open position, a metric); false when none. */
static bool result_misfit(const sebt_result *r, const char **name, double *val, char *where, size_t wsize)
{
    static const char *const mnames[] = { "win_rate", "avg_r", "total_pnl", "max_dd", "sharpe" };
    static const char *const tnames[] = { "entry_price", "exit_price", "stop", "tp", "risk", "pnl", "r" };
    static const char *const onames[] = { "entry_price", "stop", "tp", "risk" };
    const double m[] = { r->metrics.win_rate, r->metrics.avg_r, r->metrics.total_pnl, r->metrics.max_dd,
                         r->metrics.sharpe };
    for (size_t k = 0; k < r->n_trades && r->trades; k++) {
        const sebt_trade *t = &r->trades[k];
        const double v[] = { t->entry_price, t->exit_price, t->stop, t->tp, t->risk, t->pnl, t->r };
        if (first_bad(v, tnames, 7, name, val)) {
            snprintf(where, wsize, "trade %zu (signal bar %lld): ", k + 1, (long long)t->signal_index);
            return true;
        }
    }
    const sebt_open_position *o = &r->open_at_end;
    if (o->open) {
        const double v[] = { o->entry_price, o->stop, o->tp, o->risk };
        if (first_bad(v, onames, 4, name, val)) {
            snprintf(where, wsize, "the position open at the end: ");
            return true;
        }
    }
    if (first_bad(m, mnames, 5, name, val)) {
        snprintf(where, wsize, "metric ");
        return true;
    }
    return false;
}

sebt_status sebt_result_fits(const sebt_params *p, uint64_t combo, const sebt_result *r, sebt_error *err)
{
    const char *name = NULL;
    double val = 0;
    char where[96] = "";
    if (!result_misfit(r, &name, &val, where, sizeof where))
        return SEBT_OK;
    if (!err)
        return SEBT_ERR_INPUT;
    /* The parameters large enough to be the cause, when there are any. */
    char suspects[300] = "";
    size_t so = 0;
    for (int i = 0; p && i < SEBT_N_PARAMS && so + 60 < sizeof suspects; i++) {
        if (sebt_param_table[i].type != SEBT_PARAM_DOUBLE || fabs(sebt_params_get_double(p, i)) < 1e12)
            continue;
        char b[40];
        sebt_params_format(p, i, b, sizeof b);
        so += (size_t)snprintf(suspects + so, sizeof suspects - so, "%s%s=%s", so ? ", " : "",
                               sebt_param_table[i].name, b);
    }
    err->code = SEBT_ERR_INPUT;
    snprintf(err->msg, sizeof err->msg, "combo %" PRIu64 ": %s%s is %s: the result does not fit a double (%s%s); "
             "sebt never writes such a result (docs/decisions.md)", combo, where, name,
             isnan(val) ? "nan" : val > 0 ? "inf" : "-inf",
             so ? "from " : "the prices are too large for this arithmetic", suspects);
    return SEBT_ERR_INPUT;
}

/* ---- columns for conditions -------------------------------------------------- */

size_t sebt_sweep_columns(const char **names, bool *is_bool)
{
    return sebt_sweep_columns_ex(names, is_bool, false);
}

size_t sebt_sweep_columns_ex(const char **names, bool *is_bool, int cols)
{
    size_t k = 0;
    names[k] = "combo";
    is_bool[k++] = false;
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        names[k] = sebt_param_table[i].name;
        is_bool[k++] = sebt_param_table[i].type == SEBT_PARAM_BOOL;
    }
    for (int i = 0; i < SEBT_N_METRICS; i++) {
        names[k] = metric_names[i];
        is_bool[k++] = false;
    }
    names[k] = "open_at_end";
    is_bool[k++] = false;
    names[k] = "valid_bars";
    is_bool[k++] = false;
    for (int i = 0; i < sebt_sweep_extra_count(cols); i++) {
        names[k] = sebt_sweep_analysis_name(i);
        is_bool[k++] = false;
    }
    return k;
}

sebt_status sebt_sweep_where(const char *text, sebt_where **out, sebt_error *err)
{
    return sebt_sweep_where_ex(text, false, out, err);
}

sebt_status sebt_sweep_where_ex(const char *text, int cols, sebt_where **out, sebt_error *err)
{
    const char *names[SEBT_SWEEP_MAX_COLUMNS];
    bool is_bool[SEBT_SWEEP_MAX_COLUMNS];
    /* Compiled against every column, so that naming an analysis or a
     * relative column without them is told apart from a misspelt name. */
    size_t n = sebt_sweep_columns_ex(names, is_bool, SEBT_COLS_RELATIVE);
    sebt_status st = sebt_where_compile(text, names, is_bool, n, out, err);
    if (st != SEBT_OK)
        return st;
    for (size_t i = SEBT_SWEEP_N_COLUMNS + (size_t)sebt_sweep_extra_count(cols); i < n; i++)
        if (sebt_where_uses(*out, i)) {
            sebt_where_free(*out);
            *out = NULL;
            bool rel = i >= SEBT_SWEEP_N_COLUMNS + SEBT_SWEEP_N_ANALYSIS;
            return sebt_fail(err, SEBT_ERR_USAGE, "condition '%s': column %s is %s column: it needs the %s columns "
                             "(sebt sweep %s)", text, names[i], rel ? "a relative" : "an analysis",
                             rel ? "relative" : "analysis", rel ? "--relative" : "--analysis");
        }
    return SEBT_OK;
}

bool sebt_sweep_row_passes(const sebt_where *w, uint64_t combo, const sebt_params *p, const sebt_result *r)
{
    return sebt_sweep_row_passes_ex(w, combo, p, r, NULL);
}

bool sebt_sweep_row_passes_ex(const sebt_where *w, uint64_t combo, const sebt_params *p, const sebt_result *r,
                              const sebt_trade_stats *a)
{
    double v[SEBT_SWEEP_MAX_COLUMNS];
    size_t k = 0;
    v[k++] = (double)combo;
    for (int i = 0; i < SEBT_N_PARAMS; i++, k++)
        v[k] = sebt_where_uses(w, k) ? sebt_params_get_double(p, i) : 0.0;
    for (int i = 0; i < SEBT_N_METRICS; i++)
        v[k++] = sebt_metric_value(&r->metrics, i);
    v[k++] = r->open_at_end.open ? 1.0 : 0.0;
    v[k++] = (double)r->valid_bars;
    int extra = sebt_sweep_extra_count(sebt_sweep_row_cols(a));
    for (int i = 0; i < SEBT_SWEEP_N_EXTRA; i++)
        v[k++] = i < extra ? sebt_sweep_analysis_value(a, i) : 0.0;
    return sebt_where_eval(w, v);
}

/* ---- reading an npy row back ---------------------------------------------- */

/* Column i of a from its 8 bytes (a count or a double's bits). */
static void set_analysis(sebt_trade_stats *a, int i, uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    sebt_sweep_analysis_set(a, i, sebt_sweep_analysis_is_count(i) ? (double)(int64_t)bits : d);
}

static uint64_t get_le(const unsigned char *b, size_t bytes)
{
    uint64_t v = 0;
    for (size_t i = 0; i < bytes; i++)
        v |= (uint64_t)b[i] << (8 * i);
    return v;
}

static double get_f8(const unsigned char *b)
{
    uint64_t u = get_le(b, 8);
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

void sebt_sweep_npy_row_read(const unsigned char *b, uint64_t *combo, sebt_params *p, sebt_sweep_record *r)
{
    sebt_sweep_npy_row_read_ex(b, SEBT_COLS_PLAIN, combo, p, r);
}

void sebt_sweep_npy_row_read_ex(const unsigned char *b, int cols, uint64_t *combo, sebt_params *p,
                                sebt_sweep_record *r)
{
    size_t k = 8;
    *combo = get_le(b, 8);
    *p = sebt_params_default();
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        unsigned char *field = (unsigned char *)p + sebt_param_table[i].offset;
        switch (sebt_param_table[i].type) {
        case SEBT_PARAM_INT: {
            int32_t v = (int32_t)(uint32_t)get_le(b + k, 4);
            memcpy(field, &v, sizeof v);
            k += 4;
            break;
        }
        case SEBT_PARAM_DOUBLE: {
            double v = get_f8(b + k);
            memcpy(field, &v, sizeof v);
            k += 8;
            break;
        }
        default: {
            bool v = b[k++] != 0;
            memcpy(field, &v, sizeof v);
            break;
        }
        }
    }
    memset(r, 0, sizeof *r);
    r->combo = *combo;
    r->metrics.n = (int64_t)get_le(b + k, 8);
    k += 8;
    double *dst[] = { &r->metrics.win_rate, &r->metrics.avg_r, &r->metrics.total_pnl, &r->metrics.max_dd,
                      &r->metrics.sharpe };
    for (size_t i = 0; i < 5; i++, k += 8)
        *dst[i] = get_f8(b + k);
    r->open_at_end = b[k++];
    r->valid_bars = get_le(b + k, 8);
    k += 8;
    r->has_analysis = cols != SEBT_COLS_PLAIN;
    for (int i = 0; i < sebt_sweep_extra_count(cols); i++, k += 8)
        set_analysis(&r->analysis, i, get_le(b + k, 8));
}
