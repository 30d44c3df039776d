/* `sebt sweep`: backtest a grid or a list of combos over one series; in
 * shards for batch schedulers, with a checkpoint that survives a kill, and
 * across MPI ranks. Whatever the split, the output is byte for byte the
 * output of one process: each combo's result depends on nothing but the
 * combo and the series, and the writer sees all of them in input order. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "options.h"
#include "mpi.h"
#include "sebt/backends.h"
#include "sebt/grid.h"
#include "sebt/shard.h"
#include "sweep.h"

static int write_trades(const char *cmd, const char *dir, size_t idx, const sebt_series *s,
                        const sebt_result *r)
{
    char path[4096], why[600];
    snprintf(path, sizeof path, "%s/combo_%zu.csv", dir, idx);
    /* The names are ours to choose, so a link there was planted: following
     * it would overwrite whatever it points at. */
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        fprintf(stderr, "sebt %s: error: %s is %s, not a trade file of sebt: remove it (--trades writes only "
                "regular files, and never through a link)\n", cmd, path,
                S_ISLNK(st.st_mode) ? "a symbolic link" : "not a regular file");
        return CLI_EXIT_USAGE;
    }
    atomic_file af;
    int open_rc = atomic_open(&af, path, why, sizeof why);
    if (open_rc != CLI_EXIT_OK) {
        fprintf(stderr, "sebt %s: error: %s\n", cmd, why);
        return open_rc;
    }
    cli_write_trades_csv(af.f, s, r);
    if (!atomic_commit(&af, why, sizeof why)) {
        fprintf(stderr, "sebt %s: error: %s\n", cmd, why);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

typedef struct {
    const char *data, *grid, *combos, *backend, *trades, *format, *output, *by, *checkpoint;
    long threads;
    long top;
    long chunk;
    unsigned shard_i, shard_n;   /* 0/0: no --shard */
    bool have_top, lenient, fill_gaps, analysis, relative, overfit;
    int overfit_blocks;
    const char *where_text;     /* --where COND */
    sebt_where *where;
    sweep_proof_mode verify;
    size_t verify_n;             /* --verify N */
    bool have_seed;
    uint64_t seed;
} sweep_args;

/* The rows' extra columns (sebt/sweep.h). */
static int sweep_cols(const sweep_args *a)
{
    return a->relative ? SEBT_COLS_RELATIVE : a->analysis ? SEBT_COLS_ANALYSIS : SEBT_COLS_PLAIN;
}

static int spec_cols(const sweep_output_spec *spec)
{
    return spec->relative ? SEBT_COLS_RELATIVE : spec->analysis ? SEBT_COLS_ANALYSIS : SEBT_COLS_PLAIN;
}

static bool parse_count(const char *v, long *out)
{
    char *end = NULL;
    errno = 0;
    long n = strtol(v, &end, 10);
    if (end == v || *end || errno || n < 1 || n > 1000000000L)
        return false;
    *out = n;
    return true;
}

static bool parse_shard(const char *v, unsigned *i, unsigned *n)
{
    const char *slash = strchr(v, '/');
    if (!slash)
        return false;
    char a[32];
    size_t len = (size_t)(slash - v);
    if (len == 0 || len >= sizeof a)
        return false;
    memcpy(a, v, len);
    a[len] = '\0';
    long x, y;
    if (!parse_count(a, &x) || !parse_count(slash + 1, &y) || y > 1000000)
        return false;
    *i = (unsigned)x;
    *n = (unsigned)y;
    return true;
}

enum { OPT_DATA, OPT_GRID, OPT_COMBOS, OPT_BACKEND, OPT_THREADS, OPT_TOP, OPT_BY, OPT_WHERE, OPT_TRADES, OPT_FORMAT,
       OPT_ANALYSIS, OPT_RELATIVE, OPT_OUTPUT, OPT_LENIENT, OPT_FILL_GAPS, OPT_VERIFY, OPT_NO_VERIFY, OPT_SEED, OPT_SHARD,
       OPT_CHECKPOINT, OPT_CHUNK, OPT_OVERFIT, OPT_OVERFIT_BLOCKS };
static const char *const sweep_formats[] = { "csv", "json", "npy", "text", NULL };
static const char *const sweep_metrics[] = { "sharpe", "n", "win_rate", "avg_r", "total_pnl", "max_dd",
                                              "exits_stop_gap", "exits_stop", "exits_tp", "exits_time",
                                              "gross_profit", "gross_loss", "profit_factor", "bars_in_market",
                                              "exposure", "sharpe_annual", "total_return_pct", "annual_return_pct",
                                              "buy_hold_pct", "volatility_pct", "return_sharpe", "return_sortino",
                                              "calmar", "max_dd_pct", "avg_dd_pct", "longest_dd_bars",
                                              "best_trade_pct", "worst_trade_pct", "avg_trade_pct", "expectancy_pct",
                                              "avg_trade_bars", "longest_trade_bars", "sqn", NULL };
_Static_assert(sizeof sweep_metrics / sizeof sweep_metrics[0] == SEBT_SWEEP_N_RANK_KEYS + 1,
               "--by lists every rank key");
static const cli_opt sweep_opts[] = {
    [OPT_DATA] = { "--data", CLI_FILE, "FILE", "the bars (CSV or Binance klines, .gz read as is)" },
    [OPT_GRID] = { "--grid", CLI_FILE, "FILE", "one parameter per line: a list 'vol_z = 1.5, 2.0' or a\n"
                   "range 'ema_fast = 24:192:24' (stop included when it lands);\n"
                   "# comments; unnamed parameters keep their defaults; the\n"
                   "combos are the product, the file's first parameter slowest" },
    [OPT_COMBOS] = { "--combos", CLI_FILE, "FILE", "CSV: a header of parameter names, then one combo per row" },
    [OPT_BACKEND] = { "--backend", CLI_TEXT, "NAME", "fast_cpu (default), reference, cuda, cpu|gpu|auto, a plugin's\n"
                      "path, or exec:CMD, a kernel command ('exec:python3 mine.py',\n"
                      "docs/kernel-protocol.md)",
                      .complete = cli_backend_words },
    [OPT_THREADS] = CLI_OPT_THREADS("CPU threads, 1 to 4096 (default: OMP_NUM_THREADS, else every core)"),
    [OPT_TOP] = { "--top", CLI_UINT, "K", "keep the K best combos, best first", .umin = 1, .umax = 1000000000 },
    [OPT_BY] = { "--by", CLI_CHOICE, "METRIC", "what --top ranks by: sharpe (default), n, win_rate, avg_r,\n"
                 "total_pnl, max_dd, or with --analysis an analysis column (with\n"
                 "--relative a relative one)\n"
                 "(higher is better, NaN last; ties keep input order)", .choices = sweep_metrics },
    [OPT_WHERE] = { "--where", CLI_TEXT, "COND", "rank only the combos whose row passes COND, a condition over the\n"
                    "output's columns: 'n >= 30 and max_dd > -0.2' (comparisons < <=\n"
                    "> >= == !=, and, or, not, parentheses; docs/cli.md). With --top\n"
                    "or --format text" },
    [OPT_TRADES] = { "--trades", CLI_DIR, "DIR", "also write each listed combo's trades to DIR/combo_<index>.csv" },
    [OPT_FORMAT] = { "--format", CLI_CHOICE, "FMT", "csv (default), json, npy (a NumPy structured array with the\n"
                     "CSV's columns, binary: for numpy.load and pandas), or text:\n"
                     "for people, the best combos by --by as an aligned table (the\n"
                     "top 10 unless --top K)", .choices = sweep_formats },
    [OPT_ANALYSIS] = { "--analysis", CLI_FLAG, NULL, "append the analysis columns to each row: exits_stop_gap,\n"
                       "exits_stop, exits_tp, exits_time, gross_profit, gross_loss,\n"
                       "profit_factor, bars_in_market, exposure, sharpe_annual (what\n"
                       "`sebt run` shows; docs/formats.md), for --where too. Runs each\n"
                       "combo with its trades: slower. One process; not with --format\n"
                       "text, --shard, --checkpoint or --verify full" },
    [OPT_RELATIVE] = { "--relative", CLI_FLAG, NULL, "--analysis, then the relative columns: total_return_pct,\n"
                       "annual_return_pct, buy_hold_pct, volatility_pct, return_sharpe,\n"
                       "return_sortino, calmar, max_dd_pct, avg_dd_pct, longest_dd_bars,\n"
                       "best_trade_pct, worst_trade_pct, avg_trade_pct, expectancy_pct,\n"
                       "avg_trade_bars, longest_trade_bars, sqn (`sebt run`'s relative\n"
                       "measures at its default capital and fraction; docs/formats.md),\n"
                       "for --where and --by too" },
    [OPT_OUTPUT] = { "--output", CLI_FILE, "FILE", "write there instead of stdout (atomically: the file appears\n"
                     "whole when the sweep is done, never in part)" },
    [OPT_LENIENT] = { "--lenient", CLI_FLAG, NULL, "turn rejected rows into missing bars (counted on stderr)" },
    [OPT_FILL_GAPS] = { "--fill-gaps", CLI_FLAG, NULL, "insert missing bars where timestamps skip" },
    [OPT_VERIFY] = { "--verify", CLI_TEXT, "N|full", "re-check N sampled combos and the best against the reference\n"
                     "(default: at least 256, more within a twentieth of the sweep's time,\n"
                     "rows read back from the file); full: also every written row\n"
                     "against the sweep run another way, and the series cache\n"
                     "against a fresh parse. A difference: exit 1, nothing written",
                     .section = "Verification (docs/cli.md):" },
    [OPT_NO_VERIFY] = { "--no-verify", CLI_FLAG, NULL, "skip the re-check" },
    [OPT_SEED] = { "--seed", CLI_UINT, "S", "the verification sample's seed (default: drawn, then printed\n"
                   "and recorded in the output)", .umin = 0, .umax = CLI_UINT_MAX },
    [OPT_SHARD] = { "--shard", CLI_TEXT, "I/N", "run only the I-th of N deterministic shards (1 <= I <= N) and\n"
                    "write a shard file; `sebt merge` joins the N files into the\n"
                    "bytes of the whole sweep (--format and --top apply there)",
                    .section = "Spanning machines (under mpirun/srun the ranks share the combos and rank 0\n"
                               "writes the output):" },
    [OPT_CHECKPOINT] = { "--checkpoint", CLI_DIR, "DIR", "keep finished chunks in DIR (written durably); the same\n"
                         "command after a crash or a kill resumes where it stopped" },
    [OPT_CHUNK] = { "--chunk", CLI_UINT, "N", "combos per checkpoint chunk (default: 1% of the work)", .umin = 1,
                    .umax = 1000000000 },
    [OPT_OVERFIT] = { "--overfit", CLI_FLAG, NULL, "is the best combo a fluke? the deflated Sharpe ratio of the best\n"
                      "by Sharpe and the probability of backtest overfitting (CSCV)\n"
                      "over all combos, after the sweep: a block after the text table,\n"
                      "an \"overfit\" section in JSON, else on stderr (docs/formats.md).\n"
                      "Runs every combo again with its trades. One process",
                      .section = "Overfitting (docs/formats.md, \"Overfitting\"):" },
    [OPT_OVERFIT_BLOCKS] = { "--overfit-blocks", CLI_UINT, "S", "blocks the bars are cut into for PBO: even, 2 to 24\n"
                             "(default 16: 12,870 splits)", .umin = 2, .umax = SEBT_OVERFIT_MAX_BLOCKS },
};

const cli_command cli_cmd_sweep_spec = {
    .name = "sweep",
    .summary = "backtest a grid or a list of combos",
    .usage = "--data FILE (--grid FILE | --combos FILE) [options]\n",
    .about = "Backtests every combo of a grid (or of a combos CSV) over one series and\n"
             "prints one row per combo, in input order whatever the thread count.\n",
    .opts = CLI_OPTS(sweep_opts),
    .epilog = "Columns: combo (0-based input index), the 18 parameters, n, win_rate, avg_r,\n"
              "total_pnl, max_dd, sharpe, open_at_end (0|1), valid_bars, then with --analysis\n"
              "the analysis columns; npy holds the same columns as typed fields\n"
              "(docs/formats.md).\n",
    .fn = cli_cmd_sweep,
    .mpi = true,
};

/* --verify N|full, --no-verify, --seed S. Returns -1 to go on, else an exit code. */
static int parse_verify(const char *cmd, const cli_args *o, sweep_args *a)
{
    const char *v = cli_str(o, OPT_VERIFY);
    a->verify = cli_given(o, OPT_NO_VERIFY) ? PROOF_OFF : PROOF_SAMPLE;
    a->have_seed = cli_given(o, OPT_SEED);
    a->seed = o->v[OPT_SEED].u;
    if (v && !cli_given(o, OPT_NO_VERIFY) && strcmp(v, "full") == 0) {
        a->verify = PROOF_FULL;
        a->verify_n = 64;
    } else if (v && !cli_given(o, OPT_NO_VERIFY)) {
        long n;
        if (!parse_count(v, &n) || n > SEBT_VERIFY_MAX)
            return cli_usage_error(cmd, "--verify %s: expected a number of combos from 1 to %d, or full", v,
                                   SEBT_VERIFY_MAX);
        a->verify_n = (size_t)n;
    } else if (v) {
        return cli_usage_error(cmd, "--verify and --no-verify: give one of them");
    }
    if (a->have_seed && a->verify == PROOF_OFF)
        return cli_usage_error(cmd, "--seed draws the verification sample: it has no use with --no-verify");
    return -1;
}

/* Returns -1 to go on, else an exit code. */
static int parse_args(int argc, char **argv, sweep_args *a)
{
    const char *cmd = argv[0];
    memset(a, 0, sizeof *a);
    cli_args o;
    int rc = cli_parse(&cli_cmd_sweep_spec, argc, argv, &o);
    if (rc >= 0)
        return rc;
    a->data = cli_str(&o, OPT_DATA);
    a->grid = cli_str(&o, OPT_GRID);
    a->combos = cli_str(&o, OPT_COMBOS);
    a->backend = cli_str(&o, OPT_BACKEND);
    a->trades = cli_str(&o, OPT_TRADES);
    a->format = cli_str(&o, OPT_FORMAT);
    a->output = cli_str(&o, OPT_OUTPUT);
    a->by = cli_str(&o, OPT_BY);
    a->checkpoint = cli_str(&o, OPT_CHECKPOINT);
    a->threads = (long)o.v[OPT_THREADS].u;
    a->chunk = (long)o.v[OPT_CHUNK].u;
    a->top = (long)o.v[OPT_TOP].u;
    a->have_top = cli_given(&o, OPT_TOP);
    a->lenient = cli_given(&o, OPT_LENIENT);
    a->fill_gaps = cli_given(&o, OPT_FILL_GAPS);
    a->relative = cli_given(&o, OPT_RELATIVE);
    a->analysis = cli_given(&o, OPT_ANALYSIS) || a->relative;
    a->overfit = cli_given(&o, OPT_OVERFIT);
    a->overfit_blocks = cli_given(&o, OPT_OVERFIT_BLOCKS) ? (int)o.v[OPT_OVERFIT_BLOCKS].u : SEBT_OVERFIT_BLOCKS;
    if (cli_given(&o, OPT_OVERFIT_BLOCKS) && !a->overfit)
        return cli_usage_error(argv[0], "--overfit-blocks sizes --overfit's blocks: give --overfit too");
    if (a->overfit && a->overfit_blocks % 2)
        return cli_usage_error(argv[0], "--overfit-blocks %d: expected an even number (each split takes half the "
                               "blocks)", a->overfit_blocks);
    int vrc = parse_verify(cmd, &o, a);
    if (vrc >= 0)
        return vrc;
    const char *v = cli_str(&o, OPT_SHARD);
    if (v && !parse_shard(v, &a->shard_i, &a->shard_n))
        return cli_usage_error(cmd, "--shard %s: expected I/N, two whole numbers with 1 <= I <= N "
                               "(shards are numbered from 1)", v);
    if (v && a->shard_i > a->shard_n)
        return cli_usage_error(cmd, "--shard %s: shard %u does not exist: shards are numbered 1 to %u",
                               v, a->shard_i, a->shard_n);
    if (!a->data)
        return cli_usage_error(cmd, "--data FILE is required");
    if (!a->grid == !a->combos)
        return cli_usage_error(cmd, "give exactly one of --grid FILE and --combos FILE");
    bool text = a->format && strcmp(a->format, "text") == 0;
    a->where_text = cli_str(&o, OPT_WHERE);
    if (a->where_text && !a->have_top && !text)
        return cli_usage_error(cmd, "--where chooses among the combos --top K ranks (or --format text shows): give "
                               "--top K; a whole sweep's output holds every combo");
    if (a->where_text && v)
        return cli_usage_error(cmd, "--where ranks the whole sweep: a --shard holds only part of it");
    if (a->analysis && (text || v || a->checkpoint || a->verify == PROOF_FULL))
        return cli_usage_error(cmd, "%s runs in one streamed sweep: not with %s", a->relative ? "--relative" : "--analysis",
                               text ? "--format text" : v ? "--shard" : a->checkpoint ? "--checkpoint" : "--verify full");
    if (a->overfit && v)
        return cli_usage_error(cmd, "--overfit ranks the whole sweep's combos: a --shard holds only part of it");
    if (a->where_text) {
        sebt_error err = { 0 };
        if (sebt_sweep_where_ex(a->where_text, sweep_cols(a), &a->where, &err) != SEBT_OK)
            return cli_usage_error(cmd, "--where: %s", err.msg);
    }
    if (a->by && !a->have_top && !text)
        return cli_usage_error(cmd, "--by ranks the combos kept by --top K: give --top too");
    if (a->format && strcmp(a->format, "npy") == 0 && !a->shard_n &&
        (!a->output || strcmp(a->output, "-") == 0) && isatty(STDOUT_FILENO))
        return cli_usage_error(cmd, "--format npy is binary: give --output FILE.npy or redirect stdout");
    if (a->chunk && !a->checkpoint)
        return cli_usage_error(cmd, "--chunk sizes the chunks of --checkpoint DIR: give --checkpoint too");
    if (a->shard_n && a->have_top && a->trades)
        return cli_usage_error(cmd, "--trades with --top needs the whole sweep to know the kept combos: "
                               "run the shards without --trades, then `sebt run` the kept ones");
    return -1;
}

/* ---- the work of this process ---------------------------------------------------- */

typedef struct {
    sweep_args a;
    int metric;
    /* The combos: a grid made on demand (streamed sweeps), or held whole. */
    sebt_grid *grid;
    sebt_params *combos;
    size_t n_combos;
    bool streamed;
    sebt_series s;
    const sebt_backend *b;
    ckpt_id ck;
    /* The combos this process computes (global indices, increasing), and
     * their records; have[k] once computed or found in the checkpoint. */
    size_t *local;
    size_t n_local;
    sebt_sweep_record *rec;
    bool *have;
    size_t resumed;
    /* The shard's combos (all of them without --shard). */
    size_t *shard;
    size_t n_shard;
    /* A streamed sweep's SEBT_SWEEP_STATS: which threads formatted its rows,
     * and whether its file bypassed the page cache (atomic_direct). */
    const char *rows_by;
    bool direct_out;
    /* The sweep's own proof (sweep_proof.c) and when the command started. */
    sweep_proof proof;
    /* --overfit's measures, once taken. */
    sebt_overfit overfit;
    bool overfit_done;
    bool series_cached;   /* read from a cache entry, not parsed from --data */
    double t_start;
} sweep_run;

static void free_run(sweep_run *r)
{
    sebt_overfit_free(&r->overfit);
    sebt_grid_close(r->grid);
    free(r->combos);
    sebt_series_free(&r->s);
    free(r->local);
    free(r->rec);
    free(r->have);
    free(r->shard);
    sweep_proof_free(&r->proof);
    sebt_where_free(r->a.where);
}

/* Keeps the entries of idx[0..n) that the partition gives to `part`. */
static int select_part(const char *cmd, const sebt_params *combos, size_t *idx, size_t *n, uint32_t parts,
                       uint32_t part)
{
    if (parts <= 1)
        return CLI_EXIT_OK;
    uint32_t *owner = malloc((*n ? *n : 1) * sizeof *owner);
    if (!owner) {
        fprintf(stderr, "sebt %s: error: out of memory for %zu combos\n", cmd, *n);
        return CLI_EXIT_NOMEM;
    }
    sebt_error err = { 0 };
    if (sebt_partition(combos, idx, *n, parts, owner, &err) != SEBT_OK) {
        free(owner);
        return cli_report_error(cmd, &err);
    }
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (owner[i] == part)
            idx[k++] = idx[i];
    *n = k;
    free(owner);
    return CLI_EXIT_OK;
}

static void found_record(void *user, const sebt_sweep_record *rec)
{
    sweep_run *r = user;
    size_t lo = 0, hi = r->n_local;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->local[mid] < rec->combo)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < r->n_local && r->local[lo] == rec->combo && !r->have[lo]) {
        r->rec[lo] = *rec;
        r->have[lo] = true;
        r->resumed++;
    }
}

/* A whole-sweep run: the shard's combos, this rank's share of them, and
 * what the checkpoint already holds. */
static int plan_shares(const char *cmd, sweep_run *r)
{
    sweep_args *a = &r->a;
    int rc;
    r->shard = malloc(r->n_combos * sizeof *r->shard);
    if (!r->shard) {
        fprintf(stderr, "sebt %s: error: out of memory for %zu combos\n", cmd, r->n_combos);
        return CLI_EXIT_NOMEM;
    }
    for (size_t i = 0; i < r->n_combos; i++)
        r->shard[i] = i;
    r->n_shard = r->n_combos;
    if (a->shard_n) {
        rc = select_part(cmd, r->combos, r->shard, &r->n_shard, a->shard_n, a->shard_i - 1);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    r->n_local = r->n_shard;
    r->local = malloc((r->n_local ? r->n_local : 1) * sizeof *r->local);
    r->rec = calloc(r->n_local ? r->n_local : 1, sizeof *r->rec);
    r->have = calloc(r->n_local ? r->n_local : 1, sizeof *r->have);
    if (!r->local || !r->rec || !r->have) {
        fprintf(stderr, "sebt %s: error: out of memory for %zu combos\n", cmd, r->n_local);
        return CLI_EXIT_NOMEM;
    }
    memcpy(r->local, r->shard, r->n_local * sizeof *r->local);
    rc = select_part(cmd, r->combos, r->local, &r->n_local, (uint32_t)cli_mpi.size, (uint32_t)cli_mpi.rank);
    if (rc != CLI_EXIT_OK)
        return rc;

    r->ck.dir = a->checkpoint;
    r->ck.data_fp = sebt_series_fingerprint(&r->s);
    r->ck.grid_fp = sebt_combos_fingerprint(r->combos, r->n_combos);
    r->ck.bars = r->s.n;
    r->ck.n_combos = r->n_combos;
    r->ck.backend = r->b->name;
    if (a->checkpoint) {
        size_t n_chunks = 0;
        rc = ckpt_load(cmd, &r->ck, found_record, r, &n_chunks);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    return CLI_EXIT_OK;
}

/* Parses, loads and plans: every rank does the same, so an error is the
 * same everywhere and is printed once (cli_mpi_quiet_end). */
static int setup(int argc, char **argv, sweep_run *r)
{
    const char *cmd = argv[0];
    int rc = parse_args(argc, argv, &r->a);
    if (rc >= 0)
        return rc == CLI_EXIT_OK ? -2 : rc;   /* -2: --help, done */
    sweep_args *a = &r->a;
    r->metric = SWEEP_N_METRICS - 1;
    if (a->by && (r->metric = sebt_sweep_rank_key(a->by)) >= SEBT_N_METRICS && !a->analysis)
        return cli_usage_error(cmd, "--by %s ranks by an analysis column: give --analysis too", a->by);
    if (a->by && r->metric >= SEBT_N_METRICS + SEBT_SWEEP_N_ANALYSIS && !a->relative)
        return cli_usage_error(cmd, "--by %s ranks by a relative column: give --relative too", a->by);
    if (a->by && r->metric < 0)
        return cli_usage_error(cmd, "--by %s: expected one of n, win_rate, avg_r, total_pnl, max_dd, sharpe",
                               a->by);
    const sebt_path_use paths[] = {
        { "--data", a->data, SEBT_PATH_INPUT, NULL },
        { "--grid", a->grid, SEBT_PATH_INPUT, NULL },
        { "--combos", a->combos, SEBT_PATH_INPUT, NULL },
        { "--output", a->output, SEBT_PATH_OUTPUT, NULL },
        { "--trades", a->trades, SEBT_PATH_OUTPUT_DIR, "combo_*.csv" },
        { "--checkpoint", a->checkpoint, SEBT_PATH_OUTPUT_DIR, "chunk-*" },
    };
    if ((rc = cli_check_paths(cmd, paths, sizeof paths / sizeof paths[0])) != CLI_EXIT_OK)
        return rc;
    sebt_error err = { 0 };
    /* One process, no shard, no checkpoint, CSV or JSON: rows leave as
     * they are computed, and a grid's combos are made a window at a time.
     * (--format text lists the parameters that vary across all combos:
     * it holds them.) */
    r->streamed = !a->shard_n && !a->checkpoint && !(cli_mpi.active && cli_mpi.size > 1) &&
                  !(a->format && strcmp(a->format, "text") == 0);
    if (a->analysis && !r->streamed)
        return cli_usage_error(cmd, "--analysis runs in one streamed sweep: not across MPI ranks");
    if (a->overfit && cli_mpi.active && cli_mpi.size > 1)
        return cli_usage_error(cmd, "--overfit runs in one process: not across MPI ranks");
    sebt_status st = a->grid && r->streamed ? sebt_grid_open(a->grid, &r->grid, &r->n_combos, &err)
                     : a->grid ? sebt_grid_load(a->grid, &r->combos, &r->n_combos, &err)
                               : sebt_combos_load(a->combos, &r->combos, &r->n_combos, &err);
    if (st != SEBT_OK)
        return cli_report_error(cmd, &err);
    if (a->overfit && r->n_combos < 2)
        return cli_usage_error(cmd, "--overfit ranks combos against each other: the sweep has %zu combo", r->n_combos);
    sebt_cache_use use = SEBT_CACHE_OFF;
    rc = cli_load_series_use(cmd, a->data, a->lenient, a->fill_gaps, &r->s, &use);
    r->series_cached = use == SEBT_CACHE_HIT;
    if (rc != CLI_EXIT_OK)
        return rc;
    if (!a->fill_gaps && cli_mpi.rank == 0)
        cli_warn_gaps(cmd, a->data, &r->s);
    rc = cli_select_backend(cmd, a->backend, r->s.n, r->n_combos, &r->b);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (a->trades && mkdir(a->trades, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "sebt %s: error: cannot create --trades directory %s: %s\n", cmd, a->trades,
                strerror(errno));
        return CLI_EXIT_USAGE;
    }

    return r->streamed ? CLI_EXIT_OK : plan_shares(cmd, r);
}

typedef struct {
    cli_progress *bar;
    size_t base, total;
} chunk_progress;

static void chunk_progress_update(void *user, size_t done, size_t total)
{
    (void)total;
    chunk_progress *c = user;
    cli_progress_update(c->bar, c->base + done, c->total);
}

static void fill_record(sebt_sweep_record *out, size_t combo, const sebt_result *res)
{
    out->combo = combo;
    out->metrics = res->metrics;
    out->valid_bars = res->valid_bars;
    out->open_at_end = res->open_at_end.open ? 1 : 0;
}

/* The test suite's way to fail or kill a rank on purpose (docs/scaling.md,
 * "MPI"): SEBT_TEST_FAIL_RANK=R fails rank R with a message,
 * SEBT_TEST_KILL_RANK=R kills it with SIGKILL after its first chunk. */
static bool test_hook(const char *name)
{
    const char *v = getenv(name);
    return v && *v && atoi(v) == cli_mpi.rank;
}

/* A count (chunks, windows) from a test hook's variable; -1 when unset. */
static long chunk_hook(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? atol(v) : -1;
}

/* The test hooks' stop, after a chunk or a window: the pid written to the
 * FIFO named by SEBT_TEST_STOPPED_FIFO (a test waits there instead of
 * polling), then SIGSTOP; a kill from outside then lands after that chunk
 * (window) and before the next, whether it comes before or after the stop.
 * With SEBT_TEST_HOLD_FIFO the run holds in a read of that FIFO instead:
 * a signal whose handler ends the run needs no SIGCONT after it, so a
 * shell test has no stop to wait for. */
static void stop_here(void)
{
    fflush(NULL);
    const char *fifo = getenv("SEBT_TEST_STOPPED_FIFO");
    int fd = fifo && *fifo ? open(fifo, O_WRONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        char line[32];
        int len = snprintf(line, sizeof line, "%ld\n", (long)getpid());
        ssize_t w = write(fd, line, (size_t)len);
        (void)w;
        close(fd);
    }
    const char *hold = getenv("SEBT_TEST_HOLD_FIFO");
    int hd = hold && *hold ? open(hold, O_RDONLY | O_CLOEXEC) : -1;
    if (hd >= 0) {
        char c;
        while (read(hd, &c, 1) < 0 && errno == EINTR)
            ;
        close(hd);
        return;
    }
    raise(SIGSTOP);
}

/* What this process has left, bucketed into chunks: rem[k] positions into
 * local, gidx[k] their global indices; chunk c is order[start[c] ..
 * start[c + 1]), each bucket in input order. */
typedef struct {
    size_t *rem, *gidx, *order, *start;
    uint32_t *owner;
    size_t n_rem, n_chunks;
    bool in_place;   /* one chunk of every combo in input order */
} chunk_plan;

static void free_plan(chunk_plan *p)
{
    free(p->rem);
    free(p->gidx);
    free(p->owner);
    free(p->order);
    free(p->start);
}

static int plan_nomem(const char *cmd, size_t n, const char *what)
{
    fprintf(stderr, "sebt %s: error: out of memory for %zu %s\n", cmd, n, what);
    return CLI_EXIT_NOMEM;
}

/* Buckets the remaining combos by the partition's chunk. */
static int bucket_chunks(const char *cmd, chunk_plan *p)
{
    p->start = calloc(p->n_chunks + 1, sizeof *p->start);
    p->order = malloc(p->n_rem * sizeof *p->order);
    size_t *fill = malloc(p->n_chunks * sizeof *fill);
    if (!p->start || !p->order || !fill) {
        free(fill);
        return plan_nomem(cmd, p->n_rem, "combos");
    }
    for (size_t k = 0; k < p->n_rem; k++)
        p->start[p->owner[k] + 1]++;
    for (size_t c = 0; c < p->n_chunks; c++)
        p->start[c + 1] += p->start[c];
    memcpy(fill, p->start, p->n_chunks * sizeof *fill);
    for (size_t k = 0; k < p->n_rem; k++)
        p->order[fill[p->owner[k]]++] = k;
    free(fill);
    return CLI_EXIT_OK;
}

/* Chunks are balanced pieces of what is left, indicator groups kept whole;
 * without a checkpoint the whole share is one chunk. n_rem 0: nothing left. */
static int plan_chunks(const char *cmd, const sweep_run *r, chunk_plan *p)
{
    size_t cap = r->n_local ? r->n_local : 1;
    p->rem = malloc(cap * sizeof *p->rem);
    p->gidx = malloc(cap * sizeof *p->gidx);
    p->owner = malloc(cap * sizeof *p->owner);
    if (!p->rem || !p->gidx || !p->owner)
        return plan_nomem(cmd, r->n_local, "combos");
    for (size_t k = 0; k < r->n_local; k++)
        if (!r->have[k]) {
            p->rem[p->n_rem] = k;
            p->gidx[p->n_rem++] = r->local[k];
        }
    if (p->n_rem == 0)
        return CLI_EXIT_OK;
    size_t chunk = p->n_rem;
    if (r->a.checkpoint)
        chunk = r->a.chunk ? (size_t)r->a.chunk : (r->n_local + 99) / 100;
    p->n_chunks = (p->n_rem + chunk - 1) / chunk;
    if (p->n_chunks > UINT32_MAX)
        p->n_chunks = UINT32_MAX;
    sebt_error err = { 0 };
    if (sebt_partition(r->combos, p->gidx, p->n_rem, (uint32_t)p->n_chunks, p->owner, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    /* One chunk of every combo in input order (a whole sweep without a
     * checkpoint) is backtested where the combos lie: copying a million of
     * them was serial time inside the compute, with every other thread idle. */
    p->in_place = p->n_chunks == 1 && p->n_rem == r->n_combos;
    for (size_t k = 0; k < p->n_rem && p->in_place; k++)
        p->in_place = p->gidx[k] == k;
    return bucket_chunks(cmd, p);
}

typedef struct {
    sebt_params *cc;           /* a chunk's combos (NULL in place) */
    sebt_result *cr;
    sebt_sweep_record *crec;
    cli_progress prog;
    size_t done;
} chunk_bufs;

/* Backtests, checks and records chunk c (and its checkpoint file). */
static int run_chunk(const char *cmd, sweep_run *r, const chunk_plan *p, size_t c, chunk_bufs *b)
{
    sweep_args *a = &r->a;
    size_t m = p->start[c + 1] - p->start[c];
    const sebt_params *src = p->in_place ? r->combos : b->cc;
    for (size_t j = 0; j < m && !p->in_place; j++)
        b->cc[j] = r->combos[p->gidx[p->order[p->start[c] + j]]];
    if (c > 0)   /* the first has calloc's zeros: clearing 10^6 results (130 MB) again was serial time */
        memset(b->cr, 0, m * sizeof *b->cr);
    bool want_trades = a->trades && !a->have_top;
    chunk_progress cp = { .bar = &b->prog, .base = b->done, .total = r->n_local };
    sebt_batch_opts opts = { .threads = (int)a->threads, .want_trades = want_trades,
                             .progress = chunk_progress_update, .progress_user = &cp };
    sebt_error err = { 0 };
    if (sebt_backend_status(r->b, r->b->run_batch(r->b, &r->s, src, m, &opts, b->cr, &err), &err) != SEBT_OK) {
        sebt_results_free(b->cr, m);
        return cli_report_error(cmd, &err);
    }
    int rc = CLI_EXIT_OK;
    for (size_t j = 0; j < m && rc == CLI_EXIT_OK; j++) {
        size_t k = p->rem[p->order[p->start[c] + j]];
        if (sebt_result_check(r->b, &r->s, &src[j], r->local[k], &b->cr[j], &err) != SEBT_OK) {
            rc = cli_report_error(cmd, &err);
            break;
        }
        rc = cli_check_result(cmd, r->local[k], &src[j], &b->cr[j]);
        if (rc != CLI_EXIT_OK)
            break;
        fill_record(&b->crec[j], r->local[k], &b->cr[j]);
        if (want_trades)
            rc = write_trades(cmd, a->trades, r->local[k], &r->s, &b->cr[j]);
    }
    sebt_results_free(b->cr, m);
    if (rc == CLI_EXIT_OK && a->checkpoint)
        rc = ckpt_write(cmd, &r->ck, b->crec, m, (unsigned)cli_mpi.rank);
    for (size_t j = 0; j < m && rc == CLI_EXIT_OK; j++) {
        size_t k = p->rem[p->order[p->start[c] + j]];
        r->rec[k] = b->crec[j];
        r->have[k] = true;
    }
    b->done += m;
    return rc;
}

/* Runs every combo of this process not already in the checkpoint, chunk
 * by chunk. Prints and returns an exit code. */
static int compute(const char *cmd, sweep_run *r)
{
    if (test_hook("SEBT_TEST_FAIL_RANK")) {
        fprintf(stderr, "sebt %s: error: failing on purpose (SEBT_TEST_FAIL_RANK=%d)\n", cmd, cli_mpi.rank);
        return CLI_EXIT_CHECK_FAILED;
    }
    chunk_plan p = { 0 };
    chunk_bufs b = { 0 };
    int rc = plan_chunks(cmd, r, &p);
    if (rc != CLI_EXIT_OK || p.n_rem == 0) {
        free_plan(&p);
        return rc;
    }
    b.cc = p.in_place ? NULL : malloc(p.n_rem * sizeof *b.cc);
    b.cr = calloc(p.n_rem, sizeof *b.cr);
    b.crec = malloc(p.n_rem * sizeof *b.crec);
    if ((!p.in_place && !b.cc) || !b.cr || !b.crec)
        rc = plan_nomem(cmd, p.n_rem, "combos");
    cli_progress_init(&b.prog, "sweep");
    cli_progress_units(&b.prog, "combos", 1.0);
    if (cli_mpi.rank != 0)
        b.prog.tty = false;    /* one bar per job: rank 0's */
    b.done = r->n_local - p.n_rem;
    bool kill_me = test_hook("SEBT_TEST_KILL_RANK");
    long kill_chunks = chunk_hook("SEBT_TEST_KILL_AFTER_CHUNKS");
    /* Stopped, not killed: a test then kills it from outside at a known
     * point of the sweep, on a machine of any speed. */
    long stop_chunks = chunk_hook("SEBT_TEST_STOP_AFTER_CHUNKS");
    for (size_t c = 0; c < p.n_chunks && rc == CLI_EXIT_OK; c++) {
        if (p.start[c + 1] == p.start[c])
            continue;
        rc = run_chunk(cmd, r, &p, c, &b);
        if (rc == CLI_EXIT_OK && (kill_me || (kill_chunks >= 0 && (long)c + 1 >= kill_chunks))) {
            fflush(NULL);
            raise(SIGKILL);
        }
        if (rc == CLI_EXIT_OK && stop_chunks >= 0 && (long)c + 1 == stop_chunks)
            stop_here();
    }
    cli_progress_finish(&b.prog);
    free(b.cc);
    free(b.cr);
    free(b.crec);
    free_plan(&p);
    return rc;
}

/* Rank 0 receives every rank's records; the others send theirs. */
static int gather(const char *cmd, sweep_run *r, sebt_result *all)
{
    if (!cli_mpi.active || cli_mpi.size < 2) {
        for (size_t k = 0; k < r->n_local; k++) {
            sebt_result *d = &all[r->local[k]];
            d->metrics = r->rec[k].metrics;
            d->valid_bars = (size_t)r->rec[k].valid_bars;
            d->open_at_end.open = r->rec[k].open_at_end != 0;
        }
        return CLI_EXIT_OK;
    }
    size_t len = r->n_local * SEBT_SWEEP_RECORD_BYTES;
    unsigned char *buf = malloc(len ? len : 1);
    if (!buf) {
        fprintf(stderr, "sebt %s: error: out of memory for %zu records\n", cmd, r->n_local);
        return CLI_EXIT_NOMEM;
    }
    for (size_t k = 0; k < r->n_local; k++)
        sebt_sweep_record_pack(&r->rec[k], buf + k * SEBT_SWEEP_RECORD_BYTES);
    void *got = NULL;
    uint64_t got_len = 0;
    bool ok = cli_mpi_gather(buf, len, &got, &got_len);
    free(buf);
    if (!ok) {
        fprintf(stderr, "sebt %s: error: gathering the results failed\n", cmd);
        return CLI_EXIT_CHECK_FAILED;
    }
    if (cli_mpi.rank != 0)
        return CLI_EXIT_OK;
    int rc = CLI_EXIT_OK;
    if (got_len != (uint64_t)r->n_shard * SEBT_SWEEP_RECORD_BYTES) {
        fprintf(stderr, "sebt %s: error: the ranks sent %llu results, expected %zu\n", cmd,
                (unsigned long long)(got_len / SEBT_SWEEP_RECORD_BYTES), r->n_shard);
        rc = CLI_EXIT_CHECK_FAILED;
    }
    for (uint64_t k = 0; rc == CLI_EXIT_OK && k < got_len / SEBT_SWEEP_RECORD_BYTES; k++) {
        sebt_sweep_record rec;
        sebt_sweep_record_unpack((const unsigned char *)got + k * SEBT_SWEEP_RECORD_BYTES, &rec);
        if (rec.combo >= r->n_combos) {
            fprintf(stderr, "sebt %s: error: a rank sent a result for combo %llu of %zu\n", cmd,
                    (unsigned long long)rec.combo, r->n_combos);
            rc = CLI_EXIT_CHECK_FAILED;
            break;
        }
        sebt_result *d = &all[rec.combo];
        d->metrics = rec.metrics;
        d->valid_bars = (size_t)rec.valid_bars;
        d->open_at_end.open = rec.open_at_end != 0;
    }
    free(got);
    return rc;
}

static int write_shard(const char *cmd, const sweep_run *r, const sebt_result *all)
{
    const sweep_args *a = &r->a;
    atomic_file af;
    char why[600];
    int open_rc = atomic_open(&af, a->output, why, sizeof why);
    if (open_rc != CLI_EXIT_OK) {
        fprintf(stderr, "sebt %s: error: %s\n", cmd, why);
        return open_rc;
    }
    hash_writer hw;
    if (!hash_writer_open(&hw, af.f)) {
        atomic_discard(&af);
        fprintf(stderr, "sebt %s: error: out of memory opening %s\n", cmd, a->output);
        return CLI_EXIT_NOMEM;
    }
    fprintf(hw.f, "# sebt-shard %d version=%s shard=%u/%u combos=%zu rows=%zu bars=%zu data=%016llx grid=%016llx "
            "backend=%s format=%s top=%ld by=%s ", SWEEP_SHARD_FORMAT, SEBT_VERSION, a->shard_i, a->shard_n,
            r->n_combos, r->n_shard, r->s.n, (unsigned long long)r->ck.data_fp, (unsigned long long)r->ck.grid_fp,
            r->b->name, a->format ? a->format : "csv", a->have_top ? a->top : 0L,
            sebt_metric_name(r->metric));
    if (a->verify != PROOF_OFF)
        fprintf(hw.f, "verified=%zu/%zu seed=%#" PRIx64 "\n", r->proof.core.best, r->proof.core.sampled,
                r->proof.core.seed);
    else
        fprintf(hw.f, "verified=no seed=0\n");
    sweep_write_csv_header(hw.f);
    for (size_t k = 0; k < r->n_shard; k++)
        sweep_write_csv_row(hw.f, r->shard[k], &r->combos[r->shard[k]], &all[r->shard[k]]);
    uint64_t sum;
    if (!hash_writer_close(&hw, &sum)) {
        atomic_discard(&af);
        fprintf(stderr, "sebt %s: error: writing %s failed\n", cmd, a->output ? a->output : "stdout");
        return CLI_EXIT_USAGE;
    }
    fprintf(af.f, SWEEP_SHARD_END "%016llx\n", (unsigned long long)sum);
    cli_outputs_landing();
    if (!atomic_commit(&af, why, sizeof why)) {
        fprintf(stderr, "sebt %s: error: %s\n", cmd, why);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

static sebt_sweep_record record_of(size_t combo, const sebt_result *r)
{
    return (sebt_sweep_record){ .combo = combo, .metrics = r->metrics, .valid_bars = r->valid_bars,
                                .open_at_end = r->open_at_end.open ? 1 : 0 };
}

/* The whole-sweep paths (checkpoints, MPI ranks, --format text, a
 * --shard): the best combo and a sample of the results held, against the
 * reference, before the output is written. Rank 0. A shard's sample and
 * best are drawn from its own combos; its file records the proof for
 * `sebt merge`. */
static int prove_whole(const char *cmd, sweep_run *r, const sebt_result *all)
{
    sweep_args *a = &r->a;
    size_t n = r->n_combos, m = r->n_shard;
    if (a->verify == PROOF_OFF || m == 0)
        return CLI_EXIT_OK;
    r->proof = (sweep_proof){ .mode = a->verify, .core = { .fixed = a->verify_n, .seed = a->seed } };
    if (!a->have_seed)
        r->proof.core.seed = (uint64_t)(cli_now() * 1e9) ^ ((uint64_t)getpid() << 32);
    int rc = sweep_proof_plan(cmd, &r->proof, m, m);
    if (rc != CLI_EXIT_OK)
        return rc;
    /* The plan numbers the shard's combos 0..m-1; r->shard names them. */
    size_t best = r->shard[0];
    for (size_t k = 1; k < m; k++) {
        size_t i = r->shard[k];
        if (sebt_rank_compare(&all[i].metrics, i, &all[best].metrics, best, r->metric) < 0)
            best = i;
    }
    for (size_t i = 0; i < r->proof.core.n_cand; i++) {
        r->proof.core.cand[i] = r->shard[r->proof.core.cand[i]];
        r->proof.core.mem[i] = record_of(r->proof.core.cand[i], &all[r->proof.core.cand[i]]);
    }
    sebt_sweep_record b = record_of(best, &all[best]);
    sweep_proof_ctx c = { .b = r->b, .s = &r->s, .combos = r->combos, .n_combos = n, .window = n,
                          .threads = (int)a->threads, .sweep_seconds = cli_now() - r->t_start, .data = a->data,
                          .lenient = a->lenient, .fill_gaps = a->fill_gaps, .series_cached = r->series_cached };
    return sweep_proof_check(cmd, &r->proof, &c, &b, 1);
}

/* Rank 0 (or the only process): trades of the kept combos, then the output. */
static int write_results(const char *cmd, sweep_run *r, sebt_result *all)
{
    sweep_args *a = &r->a;
    if (a->shard_n)
        return write_shard(cmd, r, all);
    if (a->trades && a->have_top) {
        size_t *rows = malloc(r->n_combos * sizeof *rows);
        if (!rows) {
            fprintf(stderr, "sebt %s: error: out of memory for %zu combos\n", cmd, r->n_combos);
            return CLI_EXIT_NOMEM;
        }
        size_t n_pass = sweep_passing(rows, r->n_combos, a->where, r->combos, all);
        sweep_rank(rows, n_pass, all, r->metric);
        size_t n_rows = (size_t)a->top < n_pass ? (size_t)a->top : n_pass;
        int rc = CLI_EXIT_OK;
        for (size_t k = 0; k < n_rows && rc == CLI_EXIT_OK; k++) {
            size_t i = rows[k];
            sebt_result one;
            memset(&one, 0, sizeof one);
            sebt_error err = { 0 };
            sebt_batch_opts o1 = { .threads = (int)a->threads, .want_trades = true };
            if (sebt_backend_run(r->b, &r->s, &r->combos[i], 1, &o1, &one, &err) != SEBT_OK)
                rc = cli_report_error(cmd, &err);
            else
                rc = write_trades(cmd, a->trades, i, &r->s, &one);
            sebt_result_free(&one);
        }
        free(rows);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    sweep_output_spec spec = { .json = a->format && strcmp(a->format, "json") == 0,
                               .npy = a->format && strcmp(a->format, "npy") == 0,
                               .text = a->format && strcmp(a->format, "text") == 0, .have_top = a->have_top,
                               .top = a->top, .metric = r->metric, .where = a->where, .backend = r->b->name,
                               .bars = r->s.n, .n_combos = r->n_combos };
    return sweep_write_output(cmd, a->output, &spec, r->combos, all, NULL, NULL);
}

static double cpu_seconds(void)
{
    struct rusage u;
    if (getrusage(RUSAGE_SELF, &u) != 0)
        return 0;
    return (double)u.ru_utime.tv_sec + (double)u.ru_stime.tv_sec +
           ((double)u.ru_utime.tv_usec + (double)u.ru_stime.tv_usec) * 1e-6;
}

/* ---- streamed: one process, no shard, no checkpoint ------------------------
 * The library's driver (sebt_sweep_run, core/sweep.c) makes, backtests and
 * checks the combos a window at a time and hands each window here, in
 * input order, from its writer thread; this writes its rows (formatted by
 * the driver for CSV and npy, here for JSON) and its --trades files. The
 * bytes are those of the whole-sweep writer (sweep_write_output): the same
 * row and document writers, in the same order. */

typedef struct {
    const char *cmd;
    sweep_run *r;
    FILE *f;
    cli_json *j;     /* NULL unless JSON */
    bool want_trades;
    bool proof, rows_in_file;
    int rc;
    int write_errno;   /* of the first short fwrite (stdio keeps none) */
    long windows, stop_windows;   /* SEBT_TEST_STOP_AFTER_WINDOWS: -1 when unset */
} stream_sink;

/* Writes n bytes to the output, keeping the errno of the first failure:
 * a failed write empties stdio's buffer, so the commit's flush may find
 * nothing left to fail on and no reason to give. */
static void put(stream_sink *k, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, k->f) != n && !k->write_errno)
        k->write_errno = errno ? errno : EIO;
}

static int write_window(void *user, const sebt_sweep_window *w)
{
    stream_sink *k = user;
    for (int i = 0; i < w->n_parts; i++)
        if (w->part_bytes[i])   /* a thread with no rows has no buffer */
            put(k, w->part[i], w->part_bytes[i]);
    for (size_t i = 0; i < w->count && (k->want_trades || k->j); i++) {
        size_t idx = (size_t)w->first + i;
        if (k->want_trades) {
            k->rc = write_trades(k->cmd, k->r->a.trades, idx, &k->r->s, &w->results[i]);
            if (k->rc != CLI_EXIT_OK)
                return 1;
        }
        if (k->j)
            sweep_json_row(k->j, idx, &w->combos[i], &w->results[i], w->analysis ? &w->analysis[i] : NULL);
    }
    if (k->proof)
        sweep_proof_window(&k->r->proof, w, k->rows_in_file);
    /* Stopped with rows in the temporary file: a test signals it there on
     * a machine of any speed. */
    if (++k->windows == k->stop_windows)
        stop_here();
    return 0;
}

static void stream_progress(void *user, size_t done, size_t total)
{
    cli_progress_update(user, done, total);
}

/* --top: the kept combos, best first (and with --trades, their trades). */
static int write_top(const char *cmd, sweep_run *r, FILE *f, cli_json *j, const sebt_sweep_result *sr)
{
    sweep_args *a = &r->a;
    int rc = CLI_EXIT_OK;
    size_t n_top = sr->n_top < (size_t)a->top ? sr->n_top : (size_t)a->top;   /* the proof may keep more */
    for (size_t k = 0; k < n_top && rc == CLI_EXIT_OK; k++) {
        const sebt_sweep_record *rec = &sr->top[k];
        size_t idx = (size_t)rec->combo;
        sebt_params p;
        if (r->grid)
            sebt_grid_combos(r->grid, idx, 1, &p);
        else
            p = r->combos[idx];
        if (a->trades) {
            sebt_result one;
            memset(&one, 0, sizeof one);
            sebt_error err = { 0 };
            sebt_batch_opts o1 = { .threads = (int)a->threads, .want_trades = true };
            if (sebt_backend_run(r->b, &r->s, &p, 1, &o1, &one, &err) != SEBT_OK)
                rc = cli_report_error(cmd, &err);
            else
                rc = write_trades(cmd, a->trades, idx, &r->s, &one);
            sebt_result_free(&one);
        }
        sebt_result res;
        memset(&res, 0, sizeof res);
        res.metrics = rec->metrics;
        res.valid_bars = (size_t)rec->valid_bars;
        res.open_at_end.open = rec->open_at_end != 0;
        const sebt_trade_stats *an = rec->has_analysis ? &rec->analysis : NULL;
        char b[SEBT_CSV_ROW_MAX];
        if (j)
            sweep_json_row(j, idx, &p, &res, an);
        else if (a->format && strcmp(a->format, "npy") == 0)
            fwrite(b, 1, sebt_sweep_npy_row_ex((unsigned char *)b, idx, &p, &res, an), f);
        else
            fwrite(b, 1, sebt_sweep_csv_row_ex(b, idx, &p, &res, an), f);
    }
    return rc;
}

/* Room after the npy header's dict for the verification note: a Python
 * comment, which numpy's reader skips (docs/formats.md). */
#define NPY_NOTE_ROOM 320

/* The npy header; with room, the note (NULL: spaces to fill later). */
static size_t npy_header(char *b, uint64_t rows, int cols, bool room, const char *note)
{
    size_t total = sebt_sweep_npy_header_ex(b, rows, cols);
    if (!room)
        return total;
    size_t dict = total;
    while (dict > 10 && b[dict - 1] != '}')
        dict--;
    size_t len = note ? strlen(note) : 0, noted = (dict + 2 + NPY_NOTE_ROOM + 63) / 64 * 64;
    memset(b + dict, ' ', noted - dict);
    if (len && len < NPY_NOTE_ROOM)
        memcpy(b + dict + 1, note, len);
    b[noted - 1] = '\n';
    b[8] = (char)((noted - 10) & 0xff);
    b[9] = (char)((noted - 10) >> 8);
    return noted;
}

/* The header; returns its bytes (JSON: 0). */
static uint64_t write_head(FILE *f, cli_json *j, bool npy, bool room, const sweep_output_spec *spec, uint64_t rows)
{
    char b[SEBT_NPY_HEADER_MAX];
    size_t len = 0;
    if (j)
        sweep_json_begin(j, f, spec);
    else if (npy)
        len = npy_header(b, rows, spec_cols(spec), room, NULL);   /* the shape: the row count, known before the first row */
    else
        len = sebt_sweep_csv_header_ex(b, sizeof b, spec_cols(spec));
    fwrite(b, 1, len, f);
    return len;
}

/* The verified npy file's header, rewritten in place with its note. */
static bool note_npy(const char *path, const sweep_proof *p, uint64_t rows, int cols)
{
    char note[NPY_NOTE_ROOM], b[SEBT_NPY_HEADER_MAX];
    if (!sweep_proof_note(p, note, sizeof note))
        return false;
    size_t len = npy_header(b, rows, cols, true, note);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    bool ok = fd >= 0 && pwrite(fd, b, len, 0) == (ssize_t)len && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    return ok;
}

typedef struct {
    atomic_file af;
    cli_json j;
    bool json, npy, proof, room;
    uint64_t header, rows;
} stream_out;

/* A JSON file, complete and synced: its "verification" object appended
 * (the document's last "\n}\n" becomes ",\n" and the object), as cli_json
 * writes it. */
static bool append_json_proof(const char *path, const sweep_proof *p)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return false;
    cli_json j;
    cli_json_init(&j, m, 2);
    cli_json_begin_object(&j, NULL);
    sweep_proof_json(&j, p);
    cli_json_end_object(&j);
    cli_json_finish(&j);
    fclose(m);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    off_t end = fd >= 0 ? lseek(fd, 0, SEEK_END) : -1;
    char tail[3];
    bool ok = text && len > 2 && strncmp(text, "{\n", 2) == 0 && end >= 3 && pread(fd, tail, 3, end - 3) == 3 &&
              memcmp(tail, "\n}\n", 3) == 0 && pwrite(fd, ",\n", 2, end - 3) == 2 &&
              pwrite(fd, text + 2, len - 2, end - 1) == (ssize_t)(len - 2) && fsync(fd) == 0;
    if (fd >= 0)
        close(fd);
    free(text);
    return ok;
}

/* The driver's first window (sebt_sweep_run): a sweep whose analysis comes
 * from trades (a backend without a tally, --trades, --relative) starts
 * with a small one. */
static size_t first_window(const sweep_run *r)
{
    bool from_trades = !sebt_backend_tally_batch(r->b) || (r->a.trades && !r->a.have_top) || r->a.relative;
    return r->a.analysis && from_trades ? SEBT_SWEEP_ANALYSIS_WINDOW : SEBT_SWEEP_WINDOW;
}

/* The proof, once every row is written: a file is synced and read back,
 * then noted (npy header, JSON object); JSON on stdout gets its object
 * before the document ends. */
static int prove(const char *cmd, sweep_run *r, stream_out *o, const sebt_sweep_result *sr)
{
    sweep_args *a = &r->a;
    bool file = !o->af.is_stdout && o->af.o.atomic;
    sweep_proof_ctx c = { .b = r->b, .s = &r->s, .grid = r->grid, .combos = r->combos, .n_combos = r->n_combos,
                          .window = first_window(r),
                          .threads = (int)a->threads, .file = file ? o->af.o.tmp : NULL, .shown = a->output,
                          .npy = o->npy, .json = o->json, .analysis = a->analysis, .relative = a->relative,
                          .header_bytes = o->header, .read_back = file && !a->have_top, .where = a->where,
                          .data = a->data, .lenient = a->lenient, .fill_gaps = a->fill_gaps,
                          .series_cached = r->series_cached };
    /* The rows are complete on disk before they are read back; the sweep's
     * time, for the sample's budget, is the sweep and its sync. */
    char why[600];
    if (file && !atomic_sync(&o->af, why, sizeof why)) {
        fprintf(stderr, "sebt %s: error: %s\n", cmd, why);
        return CLI_EXIT_USAGE;
    }
    c.sweep_seconds = cli_now() - r->t_start;
    size_t n_best = sr->n_top < SEBT_VERIFY_BEST ? sr->n_top : SEBT_VERIFY_BEST;
    int rc = sweep_proof_check(cmd, &r->proof, &c, sr->top, n_best);
    if (rc != CLI_EXIT_OK)
        return rc;
    bool noted = true;
    if (o->json && !file)
        sweep_proof_json(&o->j, &r->proof);
    else if (o->json)
        noted = append_json_proof(o->af.o.tmp, &r->proof);
    else if (o->npy && o->room)
        noted = note_npy(o->af.o.tmp, &r->proof, o->rows, sweep_cols(a));
    if (!noted) {
        fprintf(stderr, "sebt %s: error: writing the verification into %s failed\n", cmd, a->output);
        return CLI_EXIT_USAGE;
    }
    return CLI_EXIT_OK;
}

static int open_stream(const char *cmd, sweep_run *r, stream_out *o)
{
    sweep_args *a = &r->a;
    char why[600];
    o->json = a->format && strcmp(a->format, "json") == 0;
    o->npy = a->format && strcmp(a->format, "npy") == 0;
    o->proof = a->verify != PROOF_OFF;
    int open_rc = atomic_open(&o->af, a->output, why, sizeof why);
    if (open_rc != CLI_EXIT_OK) {
        fprintf(stderr, "sebt %s: error: %s\n", cmd, why);
        return open_rc;
    }
    o->room = o->proof && o->npy && !o->af.is_stdout && o->af.o.atomic;
    /* More than a window of rows: written past the page cache, whose copy
     * and writeback would take the backtests' cores (docs/big-sweeps.md,
     * "Writing past the page cache"). Rows leave in large writes, not line
     * by line. */
    r->direct_out = r->n_combos > SEBT_SWEEP_WINDOW && atomic_direct(&o->af);
    static char obuf[1 << 20];
    setvbuf(o->af.f, obuf, _IOFBF, sizeof obuf);
    if (!o->proof)
        return CLI_EXIT_OK;
    r->proof = (sweep_proof){ .mode = a->verify, .core = { .fixed = a->verify_n, .seed = a->seed } };
    if (!a->have_seed)
        r->proof.core.seed = (uint64_t)(cli_now() * 1e9) ^ ((uint64_t)getpid() << 32);
    int rc = sweep_proof_plan(cmd, &r->proof, r->n_combos, first_window(r));
    if (rc != CLI_EXIT_OK)
        atomic_discard(&o->af);
    return rc;
}

/* After the sweep: --top's rows, the proof, the end of JSON, the commit. */
static int close_stream(const char *cmd, sweep_run *r, stream_out *o, const sebt_sweep_result *sr, int rc,
                        int write_errno)
{
    sweep_args *a = &r->a;
    sweep_output_spec spec = { .json = o->json, .npy = o->npy, .have_top = a->have_top, .top = a->top,
                               .metric = r->metric, .backend = r->b->name, .bars = r->s.n, .n_combos = r->n_combos,
                               .analysis = a->analysis, .relative = a->relative };
    cli_json *j = o->json ? &o->j : NULL;
    atomic_write_failed(&o->af, write_errno);
    if (rc == CLI_EXIT_OK && a->have_top) {
        o->rows = sr->n_top < (size_t)a->top ? sr->n_top : (size_t)a->top;
        o->header = write_head(o->af.f, j, o->npy, o->room, &spec, o->rows);
        rc = write_top(cmd, r, o->af.f, j, sr);
    }
    /* A JSON file is complete before it is synced and read back; on stdout
     * the verification goes in before the end. */
    bool json_now = o->json && (!o->proof || (!o->af.is_stdout && o->af.o.atomic));
    if (rc == CLI_EXIT_OK && o->json)
        cli_json_end_array(j);
    if (rc == CLI_EXIT_OK && o->json && r->overfit_done)
        sweep_overfit_json(j, &r->overfit);
    if (rc == CLI_EXIT_OK && json_now) {
        cli_json_end_object(j);
        cli_json_finish(j);
    }
    if (rc == CLI_EXIT_OK && o->proof)
        rc = prove(cmd, r, o, sr);
    if (rc == CLI_EXIT_OK && o->json && !json_now) {
        cli_json_end_object(j);
        cli_json_finish(j);
    }
    char why[600];
    if (rc != CLI_EXIT_OK) {
        if (o->af.is_stdout)
            fflush(stdout);
        else
            atomic_discard(&o->af);
    } else if (cli_outputs_landing(), !atomic_commit(&o->af, why, sizeof why)) {
        fprintf(stderr, "sebt %s: error: %s\n", cmd, why);
        rc = CLI_EXIT_USAGE;
    } else if (o->proof) {
        sweep_proof_say(cmd, &r->proof, a->output ? a->output : "stdout");
    } else {
        sweep_proof_say_skipped(cmd);
    }
    return rc;
}

/* --overfit's pass over the combos, after the sweep. */
static int take_overfit(const char *cmd, sweep_run *r)
{
    int rc = sweep_overfit_run(cmd, r->b, &r->s, r->grid, r->combos, r->n_combos, r->a.overfit_blocks,
                               (int)r->a.threads, &r->overfit);
    r->overfit_done = rc == CLI_EXIT_OK;
    return rc;
}

/* The text block: after the table of --format text on stdout, else on stderr. */
static void say_overfit(const sweep_run *r)
{
    const sweep_args *a = &r->a;
    bool text = a->format && strcmp(a->format, "text") == 0;
    bool to_stdout = text && (!a->output || strcmp(a->output, "-") == 0);
    sweep_overfit_text(to_stdout ? stdout : stderr, &r->overfit, "");
}

/* --overfit gathered as the sweep goes (no second run): with --relative
 * from the trades it records anyway, else from a walk that sums the block
 * statistics (fast_cpu's), when no trades are recorded. */
static int gather_open(const char *cmd, const sweep_args *a, const sebt_backend *b, bool want_trades, size_t n,
                       sebt_overfit_gather *g)
{
    memset(g, 0, sizeof *g);
    if (!a->overfit || !(a->relative || (sebt_backend_blocks_batch(b) && !want_trades)))
        return CLI_EXIT_OK;
    sebt_error err = { 0 };
    if (sebt_pbo_check(a->overfit_blocks, n, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    g->blocks = a->overfit_blocks;
    g->stats = sebt_overfit_stats_new(n, g->blocks);
    g->n = malloc(n * sizeof *g->n);
    g->sharpe = malloc(n * sizeof *g->sharpe);
    if (g->stats && g->n && g->sharpe)
        return CLI_EXIT_OK;
    return cli_report_error(cmd, &(sebt_error){ .code = SEBT_ERR_NOMEM,
                                                .msg = "--overfit: out of memory for the combos' block statistics" });
}

static void gather_free(sebt_overfit_gather *g)
{
    free(g->stats);
    free(g->n);
    free(g->sharpe);
}

/* The measures from what the sweep gathered. */
static int take_gathered(const char *cmd, sweep_run *r, const sebt_overfit_gather *g)
{
    sebt_error err = { 0 };
    if (sebt_overfit_gathered(r->b, &r->s, r->grid, r->combos, r->n_combos, g, (int)r->a.threads, &r->overfit,
                              &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    r->overfit_done = true;
    return CLI_EXIT_OK;
}

static int stream_sweep(const char *cmd, sweep_run *r, sebt_sweep_result *sr)
{
    sweep_args *a = &r->a;
    size_t n = r->n_combos;
    stream_out o;
    memset(&o, 0, sizeof o);
    sebt_overfit_gather gather;
    int rc = gather_open(cmd, a, r->b, a->trades && !a->have_top, n, &gather);
    if (rc == CLI_EXIT_OK)
        rc = open_stream(cmd, r, &o);
    if (rc != CLI_EXIT_OK) {
        gather_free(&gather);
        return rc;
    }
    sweep_output_spec spec = { .json = o.json, .npy = o.npy, .have_top = a->have_top, .top = a->top,
                               .metric = r->metric, .backend = r->b->name, .bars = r->s.n, .n_combos = n,
                               .analysis = a->analysis, .relative = a->relative };
    if (!a->have_top) {
        o.rows = n;
        o.header = write_head(o.af.f, o.json ? &o.j : NULL, o.npy, o.room, &spec, n);
    }
    stream_sink sink = { .cmd = cmd, .r = r, .f = o.af.f, .j = o.json && !a->have_top ? &o.j : NULL,
                         .want_trades = a->trades && !a->have_top, .proof = o.proof,
                         .rows_in_file = !o.json && !a->have_top, .rc = CLI_EXIT_OK,
                         .stop_windows = chunk_hook("SEBT_TEST_STOP_AFTER_WINDOWS") };
    r->proof.core.written = o.header;
    cli_progress prog;
    cli_progress_init(&prog, "sweep");
    cli_progress_units(&prog, "combos", 1.0);
    size_t top = a->have_top ? (size_t)a->top : 0;
    if (o.proof && top < SEBT_VERIFY_BEST)
        top = SEBT_VERIFY_BEST;   /* the best are re-checked */
    sebt_sweep_opts so = { .grid = r->grid, .combos = r->grid ? NULL : r->combos, .n_combos = n,
                           .threads = (int)a->threads, .want_trades = sink.want_trades,
                           .rows = a->have_top || o.json ? SEBT_ROWS_NONE : o.npy ? SEBT_ROWS_NPY : SEBT_ROWS_CSV,
                           .top = top, .metric = r->metric, .where = a->where, .on_window = write_window, .user = &sink,
                           .progress = stream_progress, .progress_user = &prog, .analysis = a->analysis,
                           .relative = a->relative, .overfit = gather.stats ? &gather : NULL,
                           /* The command proves its file itself (prove), rows read back. */
                           .verify = SEBT_VERIFY_OFF };
    sebt_error err = { 0 };
    sebt_status st = sebt_sweep_run(r->b, &r->s, &so, sr, &err);
    cli_progress_finish(&prog);
    rc = st != SEBT_OK ? cli_report_error(cmd, &err) : sink.rc;
    if (rc == CLI_EXIT_OK && a->overfit)
        rc = gather.stats ? take_gathered(cmd, r, &gather) : take_overfit(cmd, r);
    gather_free(&gather);
    r->rows_by = sr->rows_by_backtest_threads ? "the backtests' threads, between windows" : "the writer thread";
    return close_stream(cmd, r, &o, sr, rc, sink.write_errno);
}

/* SEBT_SWEEP_STATS=1: one line on stderr from rank 0 with each rank's
 * share and time and what travelled, for the scaling notes in docs/scaling.md. */
static void print_stats(const sweep_run *r, double t_compute, double cpu_compute, double t_gather)
{
    const char *gpu = getenv("BACKTEST_GPU_ID");
    uint64_t mine[4] = { (uint64_t)r->n_local, (uint64_t)(t_compute * 1e6), (uint64_t)(cpu_compute * 1e6),
                         gpu && *gpu ? (uint64_t)strtoull(gpu, NULL, 10) : UINT64_MAX };
    void *all = NULL;
    uint64_t len = 0;
    if (!cli_mpi_gather(mine, sizeof mine, &all, &len) || cli_mpi.rank != 0) {
        free(all);
        return;
    }
    const uint64_t *v = all;
    int n = (int)(len / sizeof mine);
    const int w = 4;
    uint64_t bytes = cli_mpi.size > 1 ? (uint64_t)(r->n_shard - r->n_local) * SEBT_SWEEP_RECORD_BYTES : 0;
    fprintf(stderr, "sweep stats: %d rank(s), %zu combos, %zu resumed from the checkpoint;", n, r->n_shard,
            r->resumed);
    for (int k = 0; k < n; k++)
    {
        fprintf(stderr, " rank %d: %llu combos in %.3f s (cpu %.3f s", k, (unsigned long long)v[w * k],
                (double)v[w * k + 1] * 1e-6, (double)v[w * k + 2] * 1e-6);
        if (v[w * k + 3] != UINT64_MAX)
            fprintf(stderr, ", gpu %llu", (unsigned long long)v[w * k + 3]);
        fprintf(stderr, ");");
    }
    fprintf(stderr, " gathered %llu bytes of results (%d per combo) in %.4f s", (unsigned long long)bytes,
            SEBT_SWEEP_RECORD_BYTES, t_gather);
    if (r->rows_by)
        fprintf(stderr, "; rows formatted by %s", r->rows_by);
    if (r->direct_out)
        fprintf(stderr, "; written past the page cache");
    fputc('\n', stderr);
    free(all);
}

int cli_cmd_sweep(int argc, char **argv)
{
    sweep_run r;
    memset(&r, 0, sizeof r);
    r.t_start = cli_now();
    cli_mpi_quiet_begin();
    int rc = setup(argc, argv, &r);
    bool help = rc == -2;
    rc = cli_mpi_quiet_end(argv[0], help ? CLI_EXIT_OK : rc);
    if (help || rc != CLI_EXIT_OK) {
        free_run(&r);
        return rc;
    }
    /* From here a failure is one rank's own: it says which rank it is and
     * takes the whole job down, so no rank waits forever for it. */
    bool ranks = cli_mpi.active && cli_mpi.size > 1;
    const char *cmd = cli_mpi_cmd(argv[0]);
    if (r.streamed) {
        sebt_sweep_result sr;
        memset(&sr, 0, sizeof sr);
        rc = stream_sweep(cmd, &r, &sr);
        if (rc == CLI_EXIT_OK && r.overfit_done)
            say_overfit(&r);
        const char *want = getenv("SEBT_SWEEP_STATS");
        if (rc == CLI_EXIT_OK && want && strcmp(want, "1") == 0) {
            r.n_local = r.n_shard = r.n_combos;
            print_stats(&r, sr.compute_s, sr.compute_cpu_s, 0);
        }
        sebt_sweep_result_free(&sr);
        if (cli_mpi.active)
            rc = cli_mpi_agree(rc);
        free_run(&r);
        return rc;
    }
    double t0 = cli_now(), c0 = cpu_seconds();
    rc = compute(cmd, &r);
    double t_compute = cli_now() - t0, cpu_compute = cpu_seconds() - c0;
    sebt_result *all = NULL;
    if (rc == CLI_EXIT_OK && cli_mpi.rank == 0 && !(all = calloc(r.n_combos, sizeof *all))) {
        fprintf(stderr, "sebt %s: error: out of memory for %zu combos\n", cmd, r.n_combos);
        rc = CLI_EXIT_NOMEM;
    }
    if (rc != CLI_EXIT_OK && ranks)
        cli_mpi_abort(rc);
    double t1 = cli_now();
    if (rc == CLI_EXIT_OK)
        rc = gather(cmd, &r, all);
    double t_gather = cli_now() - t1;
    if (rc != CLI_EXIT_OK && ranks)
        cli_mpi_abort(rc);
    const char *want_stats = getenv("SEBT_SWEEP_STATS");
    if (rc == CLI_EXIT_OK && want_stats && strcmp(want_stats, "1") == 0)
        print_stats(&r, t_compute, cpu_compute, t_gather);
    if (rc == CLI_EXIT_OK && cli_mpi.rank == 0)
        rc = prove_whole(cmd, &r, all);
    if (rc == CLI_EXIT_OK && cli_mpi.rank == 0)
        rc = write_results(cmd, &r, all);
    if (rc == CLI_EXIT_OK && cli_mpi.rank == 0 && r.proof.core.best)
        sweep_proof_say(cmd, &r.proof, r.a.output ? r.a.output : "stdout");
    else if (rc == CLI_EXIT_OK && cli_mpi.rank == 0 && r.a.verify == PROOF_OFF)
        sweep_proof_say_skipped(cmd);
    if (rc == CLI_EXIT_OK && cli_mpi.rank == 0 && r.a.overfit && !r.a.shard_n) {
        free(all);
        all = NULL;
        rc = take_overfit(cmd, &r);
        if (rc == CLI_EXIT_OK) {
            fflush(stdout);
            say_overfit(&r);
        }
    }
    free(all);
    if (cli_mpi.active)
        rc = cli_mpi_agree(rc);
    free_run(&r);
    return rc;
}
