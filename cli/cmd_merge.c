/* `sebt merge`: joins the shard files of `sebt sweep --shard I/N` into the
 * output the whole sweep would have written, byte for byte. It trusts
 * nothing: every shard must be there once, and all must come from the
 * same data, grid, backend, options and version of sebt. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"
#include "sweep.h"

enum { OPT_OUTPUT };
static const cli_opt merge_opts[] = {
    [OPT_OUTPUT] = { "--output", CLI_FILE, "FILE", "write there instead of stdout (atomically)" },
};

const cli_command cli_cmd_merge_spec = {
    .name = "merge",
    .summary = "join the shard files of `sweep --shard` into the whole sweep's output",
    .usage = "[--output FILE] SHARD_FILE...\n",
    .about = "Joins the N shard files written by `sebt sweep --shard I/N --output FILE`\n"
             "(in any order) into the output of the whole sweep: the same bytes as the\n"
             "sweep run in one go, with the --format, --top and --by the shards were given.\n"
             "Refuses a missing or repeated shard, a damaged one, and shards of different\n"
             "data, grids, backends, options or versions of sebt. Each shard proved its\n"
             "own rows before writing them (its first line records the proof); merge\n"
             "reads every row of a CSV or npy output back before publishing it, and\n"
             "says whether every shard was verified.\n",
    .opts = CLI_OPTS(merge_opts),
    .positional = "SHARD_FILE...",
    .fn = cli_cmd_merge,
};

typedef struct {
    const char *path;
    sweep_shard_header h;
    char *text;          /* the file, owned */
    char *rows;          /* first data row */
} shard_file;

static bool header_value(const char *line, const char *key, char *out, size_t size)
{
    char pat[40];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *at = strstr(line, pat);
    if (!at)
        return false;
    at += strlen(pat);
    size_t n = strcspn(at, " \n");
    if (n == 0 || n >= size)
        return false;
    memcpy(out, at, n);
    out[n] = '\0';
    return true;
}

static bool header_u64(const char *line, const char *key, uint64_t *out, int base)
{
    char v[64], *end;
    if (!header_value(line, key, v, sizeof v) || v[0] == '-')
        return false;
    errno = 0;
    *out = strtoull(v, &end, base);
    return !*end && !errno;
}

/* "verified=BEST/SAMPLED seed=HEX", or "verified=no": the shard's own proof. */
static bool read_verified(const char *line, sweep_shard_header *h)
{
    char v[48];
    if (!header_value(line, "verified", v, sizeof v) || !header_value(line, "seed", h->seed, sizeof h->seed))
        return false;
    h->verified = strcmp(v, "no") != 0;
    if (!h->verified)
        return true;
    char *slash = strchr(v, '/'), *end;
    if (!slash || slash == v || v[0] == '-' || slash[1] == '-')
        return false;
    *slash = '\0';
    errno = 0;
    h->v_best = strtoull(v, &end, 10);
    if (*end || errno)
        return false;
    h->v_sampled = strtoull(slash + 1, &end, 10);
    return !*end && !errno;
}

/* Reads the file and its header line. Prints and returns an exit code. */
static int read_shard(const char *cmd, shard_file *sf)
{
    sebt_error err = { 0 };
    size_t len;
    if (sebt_read_file(sf->path, &sf->text, &len, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    if (strlen(sf->text) != len) {
        fprintf(stderr, "sebt %s: error: %s is not a shard file (it holds NUL bytes)\n", cmd, sf->path);
        return CLI_EXIT_USAGE;
    }
    char *nl = strchr(sf->text, '\n');
    const char *prefix = "# sebt-shard ";
    if (strncmp(sf->text, prefix, strlen(prefix)) != 0 || !nl) {
        fprintf(stderr, "sebt %s: error: %s is not a shard file of `sebt sweep --shard` (its first line "
                "should start with '# sebt-shard')\n", cmd, sf->path);
        return CLI_EXIT_USAGE;
    }
    *nl = '\0';
    const char *line = sf->text;
    sweep_shard_header *h = &sf->h;
    uint64_t i, n, fmt;
    char shard[64];
    if (sscanf(line + strlen(prefix), "%llu", (unsigned long long *)&fmt) != 1 || fmt != SWEEP_SHARD_FORMAT) {
        char said[24];
        snprintf(said, sizeof said, "%.*s", (int)strcspn(line + strlen(prefix), " "), line + strlen(prefix));
        fprintf(stderr, "sebt %s: error: %s is a shard file of format '%s'; this sebt (%s) reads format %d%s\n", cmd,
                sf->path, said, SEBT_VERSION, SWEEP_SHARD_FORMAT,
                fmt == 1   ? " (format 1 had no checksum: run that shard again)"
                : fmt == 2 ? " (format 2 recorded no proof: run that shard again)"
                           : "");
        return CLI_EXIT_USAGE;
    }
    *nl = '\n';
    /* The checksum first: nothing of a damaged file is trusted, not even
     * its header. */
    size_t end = len && sf->text[len - 1] == '\n' ? len - 1 : len, last = end;
    while (last > 0 && sf->text[last - 1] != '\n')
        last--;
    const char *trailer = sf->text + last;
    size_t tag = strlen(SWEEP_SHARD_END);
    char *hex_end = NULL;
    unsigned long long said = 0;
    if (end == len || strncmp(trailer, SWEEP_SHARD_END, tag) != 0 || end - last != tag + 16 ||
        (said = strtoull(trailer + tag, &hex_end, 16), hex_end != sf->text + end)) {
        fprintf(stderr, "sebt %s: error: %s is cut short or damaged: its last line is not '%s<16 hex digits>'\n",
                cmd, sf->path, SWEEP_SHARD_END);
        return CLI_EXIT_USAGE;
    }
    uint64_t sum = sebt_fnv1a(0, sf->text, last);
    if (sum != said) {
        fprintf(stderr, "sebt %s: error: %s is damaged: its bytes hash to %016llx, its last line says %016llx\n",
                cmd, sf->path, (unsigned long long)sum, said);
        return CLI_EXIT_USAGE;
    }
    sf->text[last] = '\0';
    *nl = '\0';
    bool ok = header_value(line, "version", h->version, sizeof h->version) &&
              header_value(line, "shard", shard, sizeof shard) &&
              sscanf(shard, "%llu/%llu", (unsigned long long *)&i, (unsigned long long *)&n) == 2 &&
              header_u64(line, "combos", &h->combos, 10) && header_u64(line, "rows", &h->rows, 10) &&
              header_u64(line, "bars", &h->bars, 10) && header_u64(line, "data", &h->data_fp, 16) &&
              header_u64(line, "grid", &h->grid_fp, 16) &&
              header_value(line, "backend", h->backend, sizeof h->backend) &&
              header_value(line, "format", h->format, sizeof h->format) &&
              header_value(line, "by", h->by, sizeof h->by);
    uint64_t top = 0;
    ok = ok && header_u64(line, "top", &top, 10) && i >= 1 && i <= n && n <= 1000000 &&
         read_verified(line, h);
    if (!ok) {
        fprintf(stderr, "sebt %s: error: %s: damaged shard header: %s\n", cmd, sf->path, line);
        return CLI_EXIT_USAGE;
    }
    h->index = (unsigned)i;
    h->count = (unsigned)n;
    h->top = (long)top;
    /* The CSV header must be the one this sebt writes. */
    char *hdr = nl + 1, *nl2 = strchr(hdr, '\n');
    char expect[1024];
    FILE *mf = fmemopen(expect, sizeof expect, "w");
    if (mf) {
        sweep_write_csv_header(mf);
        fputc('\0', mf);
        fclose(mf);
    }
    if (!nl2 || strncmp(hdr, expect, (size_t)(nl2 - hdr) + 1) != 0) {
        fprintf(stderr, "sebt %s: error: %s: the second line is not the sweep's CSV header\n", cmd, sf->path);
        return CLI_EXIT_USAGE;
    }
    sf->rows = nl2 + 1;
    return CLI_EXIT_OK;
}

/* ---- the merged file, read back ---------------------------------------------
 * Each shard proved its own rows before writing them (its header's
 * verified=); what is left to prove is the merge itself: every row of the
 * file as written, read back by the library's row readers, is its shard's
 * row. */
typedef struct {
    const sebt_params *combos;
    const sebt_result *results;
    bool npy, csv;
    bool read_back;
} merge_check;

static bool same_row(const merge_check *m, size_t k, size_t want, uint64_t combo, const sebt_params *p,
                     const sebt_sweep_record *rec, char *why, size_t why_size)
{
    const sebt_result *r = &m->results[want];
    sebt_sweep_record shard = { .combo = want, .metrics = r->metrics, .valid_bars = r->valid_bars,
                                .open_at_end = r->open_at_end.open ? 1 : 0 };
    if (combo != want)
        snprintf(why, why_size, "verification failed: row %zu of the merged file reads back as combo %" PRIu64
                 ", the shards' row there is combo %zu", k + 1, combo, want);
    else if (!sebt_params_same(p, &m->combos[want]) || !sebt_sweep_record_same(rec, &shard))
        snprintf(why, why_size, "verification failed: row %zu of the merged file (combo %zu) reads back other "
                 "than its shard's row", k + 1, want);
    else
        return true;
    return false;
}

static bool check_csv(const merge_check *m, char *text, const size_t *rows, size_t n_rows, char *why,
                      size_t why_size)
{
    char *line = strchr(text, '\n');
    for (size_t k = 0; k < n_rows; k++) {
        char *nl = line ? strchr(++line, '\n') : NULL;
        uint64_t combo;
        sebt_params p;
        sebt_sweep_record rec;
        char perr[200];
        if (!nl) {
            snprintf(why, why_size, "verification failed: the merged file holds %zu rows, expected %zu", k, n_rows);
            return false;
        }
        *nl = '\0';
        if (!sebt_sweep_csv_row_read(line, false, &combo, &p, &rec, perr, sizeof perr)) {
            snprintf(why, why_size, "verification failed: row %zu of the merged file does not read back: %s", k + 1,
                     perr);
            return false;
        }
        if (!same_row(m, k, rows[k], combo, &p, &rec, why, why_size))
            return false;
        line = nl;
    }
    if (line && line[1]) {
        snprintf(why, why_size, "verification failed: the merged file holds more than its %zu rows", n_rows);
        return false;
    }
    return true;
}

static bool check_npy(const merge_check *m, const unsigned char *b, size_t len, const size_t *rows, size_t n_rows,
                      char *why, size_t why_size)
{
    size_t row = sebt_sweep_npy_row_bytes_ex(false);
    size_t start = len >= 10 ? 10 + (size_t)b[8] + ((size_t)b[9] << 8) : len + 1;
    if (len < 10 || memcmp(b, "\x93NUMPY\x01\x00", 8) != 0 || start > len || (len - start) != n_rows * row) {
        snprintf(why, why_size, "verification failed: the merged npy file does not hold %zu rows of %zu bytes",
                 n_rows, row);
        return false;
    }
    for (size_t k = 0; k < n_rows; k++) {
        uint64_t combo;
        sebt_params p;
        sebt_sweep_record rec;
        sebt_sweep_npy_row_read_ex(b + start + k * row, false, &combo, &p, &rec);
        if (!same_row(m, k, rows[k], combo, &p, &rec, why, why_size))
            return false;
    }
    return true;
}

static bool check_merged(void *ctx, const char *tmp, const size_t *rows, size_t n_rows, char *why, size_t why_size)
{
    merge_check *m = ctx;
    if (!m->npy && !m->csv)
        return true;   /* JSON and text: no independent reader here; the shards' own proofs stand */
    char *text = NULL;
    size_t len = 0;
    sebt_error err = { 0 };
    if (sebt_read_file(tmp, &text, &len, &err) != SEBT_OK) {
        snprintf(why, why_size, "cannot read the merged file back: %s", err.msg);
        return false;
    }
    bool ok = m->npy ? check_npy(m, (const unsigned char *)text, len, rows, n_rows, why, why_size)
                     : check_csv(m, text, rows, n_rows, why, why_size);
    free(text);
    m->read_back = ok;
    return ok;
}

/* What the merged output rests on, for people. */
static void say_proof(const char *cmd, const shard_file *files, size_t n_files, const merge_check *m,
                      const char *output)
{
    uint64_t best = 0, sampled = 0;
    const shard_file *unverified = NULL;
    for (size_t k = 0; k < n_files; k++) {
        if (!files[k].h.verified && !unverified)
            unverified = &files[k];
        best += files[k].h.v_best;
        sampled += files[k].h.v_sampled;
    }
    if (unverified)
        fprintf(stderr, "sebt %s: not verified: shard %u/%u (%s) ran with --no-verify", cmd, unverified->h.index,
                unverified->h.count, unverified->path);
    else
        fprintf(stderr, "sebt %s: verified: each of the %zu shards re-checked its best combo and a sample against "
                "the reference before it was written (%" PRIu64 " best, %" PRIu64 " sampled in all)", cmd, n_files,
                best, sampled);
    if (m->read_back)
        fprintf(stderr, "; every row read back from %s equals its shard's row\n", output);
    else
        fprintf(stderr, "; the merged rows were not read back (%s)\n",
                m->npy || m->csv ? "written to stdout" : "JSON and text are not read back");
}

/* The first field where two shards disagree, or NULL. */
static const char *mismatch(const sweep_shard_header *a, const sweep_shard_header *b, char *what, size_t size)
{
    if (strcmp(a->version, b->version) != 0)
        snprintf(what, size, "version of sebt (%s vs %s)", a->version, b->version);
    else if (a->count != b->count)
        snprintf(what, size, "shard count (of %u vs of %u)", a->count, b->count);
    else if (a->bars != b->bars || a->data_fp != b->data_fp)
        snprintf(what, size, "data (%llu bars, fingerprint %016llx vs %llu bars, %016llx)",
                 (unsigned long long)a->bars, (unsigned long long)a->data_fp, (unsigned long long)b->bars,
                 (unsigned long long)b->data_fp);
    else if (a->combos != b->combos || a->grid_fp != b->grid_fp)
        snprintf(what, size, "grid (%llu combos, fingerprint %016llx vs %llu combos, %016llx)",
                 (unsigned long long)a->combos, (unsigned long long)a->grid_fp, (unsigned long long)b->combos,
                 (unsigned long long)b->grid_fp);
    else if (strcmp(a->backend, b->backend) != 0)
        snprintf(what, size, "backend (%s vs %s)", a->backend, b->backend);
    else if (strcmp(a->format, b->format) != 0 || a->top != b->top || strcmp(a->by, b->by) != 0)
        snprintf(what, size, "output options (--format %s --top %ld --by %s vs --format %s --top %ld --by %s)",
                 a->format, a->top, a->by, b->format, b->top, b->by);
    else
        return NULL;
    return what;
}

int cli_cmd_merge(int argc, char **argv)
{
    const char *cmd = argv[0];
    cli_args a;
    int rc = cli_parse(&cli_cmd_merge_spec, argc, argv, &a);
    if (rc >= 0)
        return rc;
    rc = CLI_EXIT_OK;
    const char *output = cli_str(&a, OPT_OUTPUT);
    shard_file *files = calloc(a.n_pos + 1, sizeof *files);
    if (!files)
        return CLI_EXIT_CHECK_FAILED;
    size_t n_files = 0;
    for (size_t k = 0; k < a.n_pos; k++)
        files[n_files++].path = a.pos[k];
    if (rc == CLI_EXIT_OK && n_files == 0)
        rc = cli_usage_error(cmd, "give the shard files to merge");
    for (size_t k = 0; k < n_files && rc == CLI_EXIT_OK; k++) {
        const sebt_path_use paths[] = { { "SHARD", files[k].path, SEBT_PATH_INPUT, NULL },
                                        { "--output", output, SEBT_PATH_OUTPUT, NULL } };
        rc = cli_check_paths(cmd, paths, 2);
    }
    for (size_t k = 0; k < n_files && rc == CLI_EXIT_OK; k++)
        rc = read_shard(cmd, &files[k]);

    /* Same sweep, every shard once. */
    shard_file **by_index = NULL;
    if (rc == CLI_EXIT_OK) {
        const sweep_shard_header *h0 = &files[0].h;
        char what[400];
        for (size_t k = 1; k < n_files && rc == CLI_EXIT_OK; k++)
            if (mismatch(h0, &files[k].h, what, sizeof what)) {
                fprintf(stderr, "sebt %s: error: %s and %s are shards of different sweeps: their %s differ\n",
                        cmd, files[0].path, files[k].path, what);
                rc = CLI_EXIT_USAGE;
            }
        if (rc == CLI_EXIT_OK && !(by_index = calloc(h0->count + 1, sizeof *by_index)))
            rc = CLI_EXIT_CHECK_FAILED;
        for (size_t k = 0; k < n_files && rc == CLI_EXIT_OK; k++) {
            shard_file **slot = &by_index[files[k].h.index];
            if (*slot) {
                fprintf(stderr, "sebt %s: error: shard %u/%u is given twice: %s and %s\n", cmd, files[k].h.index,
                        h0->count, (*slot)->path, files[k].path);
                rc = CLI_EXIT_USAGE;
            }
            *slot = &files[k];
        }
        if (rc == CLI_EXIT_OK) {
            char list[300] = "";
            size_t n_missing = 0, used = 0;
            for (unsigned i = 1; i <= h0->count; i++)
                if (!by_index[i]) {
                    if (n_missing < 10 && used < sizeof list)
                        used += (size_t)snprintf(list + used, sizeof list - used, "%s%u", n_missing ? ", " : "", i);
                    n_missing++;
                }
            if (n_missing) {
                fprintf(stderr, "sebt %s: error: %zu of %u shards missing: %s%s (run `sebt sweep ... --shard I/%u` "
                        "for each)\n", cmd, n_missing, h0->count, list, n_missing > 10 ? ", ..." : "", h0->count);
                rc = CLI_EXIT_USAGE;
            }
        }
    }

    /* The rows: every combo exactly once. */
    sebt_params *combos = NULL;
    sebt_result *results = NULL;
    bool *seen = NULL;
    size_t n_combos = 0;
    if (rc == CLI_EXIT_OK) {
        n_combos = (size_t)files[0].h.combos;
        uint64_t total_rows = 0;
        for (size_t k = 0; k < n_files; k++)
            total_rows += files[k].h.rows;
        if (total_rows != n_combos) {
            fprintf(stderr, "sebt %s: error: the shards hold %llu rows in all, the sweep has %zu combos\n", cmd,
                    (unsigned long long)total_rows, n_combos);
            rc = CLI_EXIT_USAGE;
        } else if (!(combos = calloc(n_combos ? n_combos : 1, sizeof *combos)) ||
                   !(results = calloc(n_combos ? n_combos : 1, sizeof *results)) ||
                   !(seen = calloc(n_combos ? n_combos : 1, sizeof *seen))) {
            fprintf(stderr, "sebt %s: error: out of memory for %zu combos\n", cmd, n_combos);
            rc = CLI_EXIT_NOMEM;
        }
    }
    for (size_t k = 0; k < n_files && rc == CLI_EXIT_OK; k++) {
        shard_file *sf = &files[k];
        uint64_t rows = 0;
        size_t line_no = 2;
        for (char *line = sf->rows; *line && rc == CLI_EXIT_OK;) {
            char *nl = strchr(line, '\n');
            line_no++;
            if (!nl) {
                fprintf(stderr, "sebt %s: error: %s:%zu: the last row is cut short (no end of line)\n", cmd,
                        sf->path, line_no);
                rc = CLI_EXIT_USAGE;
                break;
            }
            *nl = '\0';
            size_t idx;
            sebt_params p;
            sebt_result res;
            char why[600];
            if (!sweep_parse_csv_row(line, &idx, &p, &res, NULL, why, sizeof why)) {
                fprintf(stderr, "sebt %s: error: %s:%zu: %s\n", cmd, sf->path, line_no, why);
                rc = CLI_EXIT_USAGE;
            } else if (idx >= n_combos) {
                fprintf(stderr, "sebt %s: error: %s:%zu: combo %zu, but the sweep has %zu\n", cmd, sf->path,
                        line_no, idx, n_combos);
                rc = CLI_EXIT_USAGE;
            } else if (seen[idx]) {
                fprintf(stderr, "sebt %s: error: %s:%zu: combo %zu is in two shards\n", cmd, sf->path, line_no, idx);
                rc = CLI_EXIT_USAGE;
            } else {
                seen[idx] = true;
                combos[idx] = p;
                results[idx] = res;
                rows++;
            }
            line = nl + 1;
        }
        if (rc == CLI_EXIT_OK && rows != sf->h.rows) {
            fprintf(stderr, "sebt %s: error: %s holds %llu rows, its header says %llu: the file is incomplete\n",
                    cmd, sf->path, (unsigned long long)rows, (unsigned long long)sf->h.rows);
            rc = CLI_EXIT_USAGE;
        }
    }
    if (rc == CLI_EXIT_OK) {
        /* The rows carry the parameters; the grid's fingerprint proves them. */
        if (sebt_combos_fingerprint(combos, n_combos) != files[0].h.grid_fp) {
            fprintf(stderr, "sebt %s: error: the rows' parameters do not match the grid the shards name "
                    "(fingerprint %016llx): a shard was edited or damaged\n", cmd,
                    (unsigned long long)files[0].h.grid_fp);
            rc = CLI_EXIT_USAGE;
        }
    }
    if (rc == CLI_EXIT_OK) {
        const sweep_shard_header *h0 = &files[0].h;
        sweep_output_spec spec = { .json = strcmp(h0->format, "json") == 0,
                                   .npy = strcmp(h0->format, "npy") == 0, .text = strcmp(h0->format, "text") == 0, .have_top = h0->top > 0,
                                   .top = h0->top, .metric = sebt_metric_index(h0->by), .backend = h0->backend,
                                   .bars = (size_t)h0->bars, .n_combos = n_combos };
        if (spec.metric < 0)
            spec.metric = SWEEP_N_METRICS - 1;
        merge_check mc = { .combos = combos, .results = results, .npy = spec.npy,
                           .csv = !spec.npy && !spec.json && !spec.text };
        spec.check_written = check_merged;
        spec.check_ctx = &mc;
        rc = sweep_write_output(cmd, output, &spec, combos, results, NULL, NULL);
        if (rc == CLI_EXIT_OK)
            say_proof(cmd, files, n_files, &mc, output ? output : "stdout");
    }
    for (size_t k = 0; k < n_files; k++)
        free(files[k].text);
    free(files);
    free(by_index);
    free(combos);
    free(results);
    free(seen);
    return rc;
}
