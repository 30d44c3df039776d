/* Regression fixtures: a shrunk case kept forever under
 * fixtures/regressions/<name>/:
 *   series.csv           the bars (sebt_write_csv; missing bars as nan)
 *   params.txt           the combo, one name=value per line
 *   expected.json        the reference's result (trades, open position, metrics)
 *   README.txt           where it came from and what diverged
 * The test suite replays every folder against every backend. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oracle_internal.h"
#include "sebt/backends.h"
#include "sebt/grid.h"
#include "sebt/outfile.h"
#include "sebt/number.h"

static sebt_status make_dir(const char *path, sebt_error *err)
{
    if (mkdir(path, 0777) == 0 || errno == EEXIST)
        return SEBT_OK;
    return sebt_fail(err, SEBT_ERR_IO, "cannot create folder %s: %s", path, strerror(errno));
}

static void put_double(FILE *f, double v)
{
    if (isnan(v) || isinf(v))
        fputs("null", f);
    else {
        char buf[SEBT_DOUBLE_CHARS];
        fwrite(buf, 1, sebt_format_double(v, buf), f);
    }
}

static void write_expected(FILE *f, const sebt_series *s, const sebt_result *r)
{
    fprintf(f, "{\n  \"backend\": \"reference\",\n  \"bars\": %zu,\n  \"valid_bars\": %zu,\n",
            s->n, r->valid_bars);
    const sebt_metrics *m = &r->metrics;
    fprintf(f, "  \"metrics\": {\"n\": %lld, \"win_rate\": ", (long long)m->n);
    put_double(f, m->win_rate);
    fputs(", \"avg_r\": ", f);
    put_double(f, m->avg_r);
    fputs(", \"total_pnl\": ", f);
    put_double(f, m->total_pnl);
    fputs(", \"max_dd\": ", f);
    put_double(f, m->max_dd);
    fputs(", \"sharpe\": ", f);
    put_double(f, m->sharpe);
    fputs("},\n  \"open_at_end\": ", f);
    const sebt_open_position *o = &r->open_at_end;
    if (!o->open) {
        fputs("null", f);
    } else {
        fprintf(f, "{\"signal_index\": %lld, \"entry_index\": %lld, \"entry_price\": ",
                (long long)o->signal_index, (long long)o->entry_index);
        put_double(f, o->entry_price);
        fputs(", \"stop\": ", f);
        put_double(f, o->stop);
        fputs(", \"tp\": ", f);
        put_double(f, o->tp);
        fputs(", \"risk\": ", f);
        put_double(f, o->risk);
        fprintf(f, ", \"bars_held\": %d}", (int)o->bars_held);
    }
    fputs(",\n  \"trades\": [", f);
    for (size_t i = 0; i < r->n_trades; i++) {
        const sebt_trade *t = &r->trades[i];
        fprintf(f, "%s\n    {\"signal_index\": %lld, \"entry_index\": %lld, \"exit_index\": %lld, "
                   "\"entry_price\": ", i ? "," : "", (long long)t->signal_index,
                (long long)t->entry_index, (long long)t->exit_index);
        put_double(f, t->entry_price);
        fputs(", \"exit_price\": ", f);
        put_double(f, t->exit_price);
        fputs(", \"stop\": ", f);
        put_double(f, t->stop);
        fputs(", \"tp\": ", f);
        put_double(f, t->tp);
        fputs(", \"risk\": ", f);
        put_double(f, t->risk);
        fputs(", \"pnl\": ", f);
        put_double(f, t->pnl);
        fputs(", \"r\": ", f);
        put_double(f, t->r);
        fprintf(f, ", \"reason\": \"%s\", \"bars_held\": %d}", sebt_exit_reason_name(t->reason),
                (int)t->bars_held);
    }
    fputs(r->n_trades ? "\n  ]\n}\n" : "]\n}\n", f);
}

sebt_status sebt_fixture_write(const char *dir, const char *name, const sebt_series *s,
                               const sebt_params *p, const char *note, char *path,
                               size_t path_size, sebt_error *err)
{
    const sebt_backend *ref = &sebt_reference_backend;
    sebt_result r = { 0 };
    sebt_batch_opts o = { .threads = 1, .want_trades = true };
    sebt_status st = ref->run_batch(ref, s, p, 1, &o, &r, err);
    if (st)
        return st;
    char folder[1024], file[1100];
    snprintf(folder, sizeof folder, "%s/%s", dir, name);
    if ((st = make_dir(dir, err)) || (st = make_dir(folder, err))) {
        sebt_result_free(&r);
        return st;
    }
    static const char *names[] = { "series.csv", "params.txt", "expected.json", "README.txt" };
    for (int i = 0; i < 4 && st == SEBT_OK; i++) {
        snprintf(file, sizeof file, "%s/%s", folder, names[i]);
        sebt_outfile of; /* atomic: a fixture is whole or absent */
        if ((st = sebt_outfile_open(&of, file, err)) != SEBT_OK)
            break;
        FILE *f = of.f;
        if (i == 0) {
            st = sebt_write_csv(s, f, err);
        } else if (i == 1) {
            for (int j = 0; j < SEBT_N_PARAMS; j++) {
                char v[64];
                sebt_params_format(p, j, v, sizeof v);
                fprintf(f, "%s=%s\n", sebt_param_table[j].name, v);
            }
        } else if (i == 2) {
            write_expected(f, s, &r);
        } else {
            fputs(note ? note : "", f);
        }
        if (st != SEBT_OK)
            sebt_outfile_abort(&of);
        else
            st = sebt_outfile_commit(&of, err);
    }
    sebt_result_free(&r);
    if (st == SEBT_OK && path)
        snprintf(path, path_size, "%s", folder);
    return st;
}

/* ---- reading ----------------------------------------------------------- */

sebt_status sebt_params_read_file(const char *path, sebt_params *p, sebt_error *err)
{
    char *text = NULL;
    size_t text_len = 0;
    sebt_status read_st = sebt_read_file(path, &text, &text_len, err);
    if (read_st != SEBT_OK)
        return read_st;
    sebt_status st = SEBT_OK;
    size_t line = 0;
    for (char *save = NULL, *l = strtok_r(text, "\n", &save); l && st == SEBT_OK;
         l = strtok_r(NULL, "\n", &save)) {
        line++;
        size_t len = strlen(l);
        while (len && (l[len - 1] == '\r' || l[len - 1] == ' '))
            l[--len] = '\0';
        while (*l == ' ')
            l++;
        if (!*l || *l == '#')
            continue;
        char *eq = strchr(l, '=');
        if (!eq) {
            st = sebt_fail(err, SEBT_ERR_INPUT, "%s:%zu: expected name=value, got '%s'", path, line, l);
            break;
        }
        *eq = '\0';
        char msg[SEBT_ERROR_MSG_MAX];
        st = sebt_params_set(p, l, eq + 1, err);
        if (st) {
            snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
            st = sebt_fail(err, st, "%s:%zu: %s", path, line, msg);
        }
    }
    free(text);
    return st;
}

/* The number after "key": inside [from, to); false when absent. */
static bool json_number(const char *from, const char *to, const char *key, double *out)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":", key);
    size_t plen = strlen(pat);
    for (const char *c = from; c + plen <= to; c++)
        if (memcmp(c, pat, plen) == 0) {
            const char *v = c + plen;
            while (*v == ' ')
                v++;
            if (strncmp(v, "null", 4) == 0) {
                *out = NAN;
                return true;
            }
            char *end;
            *out = strtod(v, &end);
            return end != v;
        }
    return false;
}

static bool json_reason(const char *from, const char *to, sebt_exit_reason *out)
{
    const char *k = strstr(from, "\"reason\":");
    if (!k || k >= to)
        return false;
    const char *q = strchr(k + 9, '"');
    if (!q || q >= to)
        return false;
    const char *end = strchr(q + 1, '"');
    return end && end < to && sebt_exit_reason_parse(q + 1, (size_t)(end - (q + 1)), out);
}

static sebt_status read_expected(const char *path, sebt_result *r, sebt_error *err)
{
    char *text = NULL;
    size_t text_len = 0;
    sebt_status read_st = sebt_read_file(path, &text, &text_len, err);
    if (read_st != SEBT_OK)
        return read_st;
    memset(r, 0, sizeof *r);
    const char *end = text + strlen(text);
    const char *trades = strstr(text, "\"trades\":");
    const char *metrics = strstr(text, "\"metrics\":");
    const char *open = strstr(text, "\"open_at_end\":");
    double v;
    sebt_status st = SEBT_OK;
    if (!trades || !metrics || !open || !json_number(text, metrics, "valid_bars", &v)) {
        free(text);
        return sebt_fail(err, SEBT_ERR_INPUT, "%s: expected valid_bars, metrics, open_at_end and "
                         "trades as sebt_fixture_write writes them", path);
    }
    r->valid_bars = (size_t)v;
    sebt_metrics *m = &r->metrics;
    bool ok = json_number(metrics, open, "n", &v);
    m->n = (int64_t)v;
    ok = ok && json_number(metrics, open, "win_rate", &m->win_rate) &&
         json_number(metrics, open, "avg_r", &m->avg_r) &&
         json_number(metrics, open, "total_pnl", &m->total_pnl) &&
         json_number(metrics, open, "max_dd", &m->max_dd) &&
         json_number(metrics, open, "sharpe", &m->sharpe);
    const char *ov = open + strlen("\"open_at_end\":");
    while (*ov == ' ')
        ov++;
    if (ok && *ov == '{') {
        sebt_open_position *o = &r->open_at_end;
        o->open = true;
        double si, ei, bh;
        ok = json_number(ov, trades, "signal_index", &si) && json_number(ov, trades, "entry_index", &ei) &&
             json_number(ov, trades, "entry_price", &o->entry_price) &&
             json_number(ov, trades, "stop", &o->stop) && json_number(ov, trades, "tp", &o->tp) &&
             json_number(ov, trades, "risk", &o->risk) && json_number(ov, trades, "bars_held", &bh);
        o->signal_index = (int64_t)si;
        o->entry_index = (int64_t)ei;
        o->bars_held = (int32_t)bh;
    }
    size_t cap = 0;
    for (const char *c = trades; ok && (c = strchr(c, '{')) != NULL;) {
        const char *close = strchr(c, '}');
        if (!close) {
            ok = false;
            break;
        }
        if (r->n_trades == cap) {
            cap = cap ? cap * 2 : 16;
            sebt_trade *t = realloc(r->trades, cap * sizeof *t);
            if (!t) {
                st = sebt_fail(err, SEBT_ERR_NOMEM, "out of memory reading %s", path);
                break;
            }
            r->trades = t;
        }
        sebt_trade *t = &r->trades[r->n_trades];
        double si, ei, xi, bh;
        ok = json_number(c, close, "signal_index", &si) && json_number(c, close, "entry_index", &ei) &&
             json_number(c, close, "exit_index", &xi) &&
             json_number(c, close, "entry_price", &t->entry_price) &&
             json_number(c, close, "exit_price", &t->exit_price) &&
             json_number(c, close, "stop", &t->stop) && json_number(c, close, "tp", &t->tp) &&
             json_number(c, close, "risk", &t->risk) && json_number(c, close, "pnl", &t->pnl) &&
             json_number(c, close, "r", &t->r) && json_number(c, close, "bars_held", &bh) &&
             json_reason(c, close, &t->reason);
        t->signal_index = (int64_t)si;
        t->entry_index = (int64_t)ei;
        t->exit_index = (int64_t)xi;
        t->bars_held = (int32_t)bh;
        r->n_trades += ok;
        c = close + 1;
    }
    (void)end;
    free(text);
    if (st == SEBT_OK && !ok)
        st = sebt_fail(err, SEBT_ERR_INPUT, "%s: a metrics, open_at_end or trade field is missing "
                       "or not a number", path);
    if (st)
        sebt_result_free(r);
    return st;
}

sebt_status sebt_fixture_read(const char *path, sebt_fixture *out, sebt_error *err)
{
    memset(out, 0, sizeof *out);
    char file[1100];
    snprintf(file, sizeof file, "%s/series.csv", path);
    sebt_load_opts lo = { 0 };
    sebt_status st = sebt_load_csv(file, &lo, &out->series, err);
    if (st)
        return st;
    out->params = sebt_params_default();
    snprintf(file, sizeof file, "%s/params.txt", path);
    st = sebt_params_read_file(file, &out->params, err);
    if (st == SEBT_OK) {
        snprintf(file, sizeof file, "%s/expected.json", path);
        st = read_expected(file, &out->expected, err);
    }
    if (st)
        sebt_fixture_free(out);
    return st;
}

void sebt_fixture_free(sebt_fixture *f)
{
    if (!f)
        return;
    sebt_series_free(&f->series);
    sebt_result_free(&f->expected);
}

/* ---- checking a backend against fixtures --------------------------------- */

/* batch.txt: threads=, memory_budget= (written by sebt fuzz for batch bugs). */
static sebt_status read_batch(const char *path, int *threads, size_t *budget, sebt_error *err)
{
    char *text;
    size_t len;
    sebt_status st = sebt_read_file(path, &text, &len, err);
    if (st)
        return st;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        unsigned long long v;
        if (sscanf(line, "threads=%llu", &v) == 1)
            *threads = (int)v;
        else if (sscanf(line, "memory_budget=%llu", &v) == 1)
            *budget = (size_t)v;
    }
    free(text);
    return SEBT_OK;
}

/* The calls of a fixture's before/ folder (01, 02, ... in order): each
 * batch checked as it was when the fuzzer ran it, for the state it leaves
 * in the backend; what they give is not judged. */
static sebt_status run_before(const sebt_backend *cand, const char *path, sebt_error *err)
{
    sebt_status st = SEBT_OK;
    for (int at = 1; st == SEBT_OK && at < 100; at++) {
        char before[1100], series[1200];
        struct stat sb;
        snprintf(before, sizeof before, "%s/before/%02d", path, at);
        snprintf(series, sizeof series, "%s/series.csv", before);
        if (stat(series, &sb) != 0)
            break;
        bool diverged = false;
        st = sebt_fixture_check(cand, before, &diverged, NULL, err);
    }
    return st;
}

sebt_status sebt_fixture_check(const sebt_backend *cand, const char *path, bool *diverged,
                               sebt_divergence *div, sebt_error *err)
{
    *diverged = false;
    sebt_status st = run_before(cand, path, err);
    if (st)
        return st;
    sebt_fixture f;
    st = sebt_fixture_read(path, &f, err);
    if (st)
        return st;
    char file[1100];
    sebt_params *combos = &f.params;
    size_t n = 1;
    sebt_oracle_opts o = { .threads = 1, .stop_first = true };
    snprintf(file, sizeof file, "%s/combos.csv", path);
    struct stat sb;
    if (stat(file, &sb) == 0) {
        st = sebt_combos_load(file, &combos, &n, err);
        snprintf(file, sizeof file, "%s/batch.txt", path);
        if (st == SEBT_OK && stat(file, &sb) == 0)
            st = read_batch(file, &o.threads, &o.memory_budget, err);
    }
    sebt_oracle_report r;
    if (st == SEBT_OK)
        st = sebt_oracle_check(cand, &f.series, combos, n, &o, &r, err);
    if (st == SEBT_OK && r.combos_diverged) {
        *diverged = true;
        if (div)
            *div = r.details[0];
    }
    if (combos != &f.params)
        free(combos);
    sebt_fixture_free(&f);
    return st;
}

sebt_status sebt_fixtures_check(const sebt_backend *cand, const char *dir, size_t *n_fixtures,
                                size_t *n_diverged, char *first, size_t first_size, sebt_error *err)
{
    *n_fixtures = *n_diverged = 0;
    if (first && first_size)
        first[0] = '\0';
    DIR *d = opendir(dir);
    if (!d)
        return sebt_fail(err, SEBT_ERR_IO, "cannot open %s: %s", dir, strerror(errno));
    sebt_status st = SEBT_OK;
    struct dirent *e;
    while (st == SEBT_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[2048], series[2100];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        snprintf(series, sizeof series, "%s/series.csv", path);
        struct stat sb;
        if (stat(series, &sb) != 0)
            continue;
        bool diverged = false;
        st = sebt_fixture_check(cand, path, &diverged, NULL, err);
        (*n_fixtures)++;
        if (diverged && (*n_diverged)++ == 0 && first)
            snprintf(first, first_size, "%s", e->d_name);
    }
    closedir(d);
    return st;
}
