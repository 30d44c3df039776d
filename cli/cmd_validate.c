/* `sebt validate`: the release gate for one backend, one command.
 *
 * Stages, each a list of checks (one JUnit testcase each):
 *   replay        every fixture of fixtures/regressions
 *   parity        every bundled real series, plain and gap-filled, with the
 *                 parity combos; counts the candidate's trades
 *   fuzz          generated cases for --time seconds (or --cases of them),
 *                 in rounds of FUZZ_ROUND cases with their own seeds and
 *                 thread counts
 *   anti-vacuity  the same harness catches every mutant in this run, and
 *                 the candidate produced trades on real data
 *   speed         a fixed sweep against fast_cpu (reported; gated only
 *                 with --min-speedup)
 *
 * Every check (validate_checks.c) runs in a child process (fork,
 * validate_isolate.c) that writes its outcome into shared memory: a backend
 * that crashes takes down the child only, and the crash is reported as such,
 * with the command that reproduces it, never as a divergence. The parent
 * runs no backend code (in particular no OpenMP before a fork). The reports
 * are validate_report.c's. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "options.h"
#include "select.h"
#include "validate.h"

/* Messages and commands are built in fixed buffers that live in shared
 * memory; one that would not fit (a path of thousands of characters) is
 * cut, never overflowed, which is what this warning is about. */
#pragma GCC diagnostic ignored "-Wformat-truncation"
#include "sebt/grid.h"

static v_check *add_check(v_ctx *c, const char *stage, const char *fmt, ...) SEBT_PRINTF(3, 4);
static v_check *add_check(v_ctx *c, const char *stage, const char *fmt, ...)
{
    if (c->n_checks == MAX_CHECKS)
        return NULL;
    v_check *k = &c->checks[c->n_checks++];
    memset(k, 0, sizeof *k);
    k->stage = stage;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(k->name, sizeof k->name, fmt, ap);
    va_end(ap);
    return k;
}

/* ---- data and fixtures ------------------------------------------------------------ */

void cli_share_paths(char *fixtures, size_t fsize, char *combos, size_t csize)
{
    snprintf(fixtures, fsize, "%s", cli_share("fixtures"));
    snprintf(combos, csize, "%s", cli_share("parity-combos.csv"));
}

static int cmp_str(const void *x, const void *y) { return strcmp(*(char *const *)x, *(char *const *)y); }

static void free_list(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* The entries of dir (files when want_dirs is false, folders when true)
 * whose names end in one of the suffixes, sorted; malloc'd. Out of memory
 * sets *nomem and lists nothing: a partial list would skip entries without
 * a word. */
static size_t list_dir(const char *dir, bool want_dirs, char ***out, bool *nomem)
{
    *out = NULL;
    *nomem = false;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || S_ISDIR(st.st_mode) != want_dirs)
            continue;
        size_t len = strlen(e->d_name);
        if (!want_dirs && !(len > 4 && strcmp(e->d_name + len - 4, ".csv") == 0) &&
            !(len > 7 && strcmp(e->d_name + len - 7, ".csv.gz") == 0))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **grown = realloc(v, cap * sizeof *v);
            if (!grown) {
                *nomem = true;
                break;
            }
            v = grown;
        }
        if (!(v[n] = strdup(path))) {
            *nomem = true;
            break;
        }
        n++;
    }
    closedir(d);
    if (*nomem) {
        free_list(v, n);
        return 0;
    }
    if (n)
        qsort(v, n, sizeof *v, cmp_str);
    *out = v;
    return n;
}

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* ---- options -------------------------------------------------------------------- */

enum { OPT_BACKEND, OPT_TIME, OPT_CASES, OPT_SEED, OPT_THREADS, OPT_DATA, OPT_MIN_SPEEDUP, OPT_NO_SPEED, OPT_SAVE,
       OPT_REPLAY, OPT_NO_ISOLATE, OPT_ISOLATE, OPT_FORMAT, OPT_JUNIT, OPT_MARKDOWN, OPT_CHECK_TIMEOUT,
       OPT_CALL_TIMEOUT, OPT_FAIL_FAST, OPT_BIG_CALL, OPT_SPEED_ONLY };
static const cli_opt validate_opts[] = {
    [OPT_BACKEND] = { "--backend", CLI_TEXT, "X", "fast_cpu, cuda, reference, the path of a plugin, or a kernel\n"
                      "command: 'exec:python3 mine.py' (docs/kernel-protocol.md)",
                      .complete = cli_backend_words },
    [OPT_TIME] = { "--time", CLI_REAL, "SECONDS", "fuzz budget (default 120)", .flags = CLI_ABOVE_MIN, .rmin = 0,
                   .rmax = 1e6 },
    [OPT_CASES] = { "--cases", CLI_UINT, "N", "fuzz N cases instead of for a time: the same cases in every run\n"
                    "(a big case after every 500 small ones, as in the mutants' fuzz)",
                    .umin = 1, .umax = CLI_UINT_MAX },
    [OPT_SEED] = { "--seed", CLI_UINT, "S", "first fuzz seed (default 1); round k uses seed S+k",
                   .umax = CLI_UINT_MAX },
    [OPT_THREADS] = CLI_OPT_THREADS("most threads given to the backend (default: OMP_NUM_THREADS or\n"
                                    "all cores); fuzz rounds cycle 1, 2, ..., N"),
    [OPT_DATA] = { "--data", CLI_FILE, "FILE", "check parity on FILE instead of the bundled series (repeatable)",
                   .flags = CLI_REPEAT, .max_count = MAX_DATA },
    [OPT_MIN_SPEEDUP] = { "--min-speedup", CLI_REAL, "X", "fail unless the backend is at least X times fast_cpu's speed",
                          .flags = CLI_ABOVE_MIN, .rmin = 0, .rmax = INFINITY },
    [OPT_NO_SPEED] = { "--no-speed", CLI_FLAG, NULL, "skip the speed stage" },
    [OPT_SAVE] = { "--save", CLI_DIR, "DIR", "where a fuzz reproducer is written (default ./sebt-validate)" },
    [OPT_REPLAY] = { "--replay", CLI_DIR, "DIR", "only replay this fixture folder (what a failure tells you to run)" },
    [OPT_NO_ISOLATE] = { "--no-isolate", CLI_FLAG, NULL, "run the checks in this process (a crash then ends the run);\n"
                         "the default for cuda, whose CUDA context does not survive fork,\n"
                         "and for a kernel command (exec:), which has its own process" },
    [OPT_ISOLATE] = { "--isolate", CLI_FLAG, NULL, "one child process per check (the default for other backends)" },
    [OPT_FORMAT] = { "--format", CLI_CHOICE, "FMT", "text (default) or json, on stdout", .choices = cli_text_json },
    [OPT_JUNIT] = { "--junit", CLI_FILE, "FILE", "JUnit XML: one testcase per stage and data set" },
    [OPT_CHECK_TIMEOUT] = { "--check-timeout", CLI_REAL, "SECONDS",
                             "stop a check (child process) running longer, reported as a crash\n"
                             "(default: 600, or 3 x --time + 60 when that is more)",
                             .flags = CLI_ABOVE_MIN, .rmin = 0, .rmax = 1e7 },
    [OPT_CALL_TIMEOUT] = { "--call-timeout", CLI_REAL, "SECONDS",
                            "a call of the backend running longer than SECONDS and 20 x the\n"
                            "reference's time for the same work is hung: stopped, reported as\n"
                            "a crash naming the check, later checks skipped (default 60; with\n"
                            "one child process per check)",
                            .flags = CLI_ABOVE_MIN, .rmin = 0, .rmax = 1e7 },
    [OPT_MARKDOWN] = { "--markdown", CLI_FILE, "FILE", "a summary for a CI job page (GitHub's $GITHUB_STEP_SUMMARY)" },
    [OPT_FAIL_FAST] = { "--fail-fast", CLI_FLAG, NULL, "stop at the first check that fails, crashes or ends in\n"
                        "an error such as out of memory (the later ones are reported\n"
                        "as skipped)" },
    [OPT_BIG_CALL] = { "--big-call", CLI_FLAG, NULL, "only the big call: one metrics-only call of more than 2^32\n"
                       "bar-combos (what a big-call failure tells you to run)" },
    [OPT_SPEED_ONLY] = { "--speed-only", CLI_FLAG, NULL, "only the speed stage: time the backend against fast_cpu\n"
                         "without the checks (a timing, not a release gate)" },
};

const cli_command cli_cmd_validate_spec = {
    .name = "validate",
    .summary = "the release gate for one backend or plugin: replay, parity, fuzz, speed",
    .usage = "--backend NAME|PATH|exec:CMD [--time SECONDS | --cases N] [--seed S] [--threads N] [--data FILE]... [--min-speedup X] [--no-speed] [--save DIR] [--isolate | --no-isolate] [--check-timeout SECONDS] [--call-timeout SECONDS] [--fail-fast] [--big-call | --speed-only] [--format text|json] [--junit FILE] [--markdown FILE]\n"
             "--backend NAME|PATH --replay FIXTURE_DIR\n"
             "--backend NAME|PATH --big-call [--seed S] [--threads N]\n",
    .about = "The release gate for one backend: a built-in one (fast_cpu, cuda) or a plugin\n"
             "(a path: ./libmine.so). In one run it\n"
             "  replays every fixture of fixtures/regressions against the reference,\n"
             "  checks parity on every bundled real series, plain and gap-filled, with the\n"
             "    parity combos (exact: bit for bit; tolerant: within tol, ties adjudicated),\n"
             "  fuzzes it for --time seconds (or --cases N) with sebt fuzz's cases (0 to\n"
             "    140,000 bars, 1 to 65,600 combos a batch, sweep-shaped grids, spikes then\n"
             "    near-ties, holes and jumps past 2^16, 10^5 and 2^17 bars, memory budgets\n"
             "    that split batches, 1 to N threads; from the first cases, sweeps over costs\n"
             "    and time limits, batches of 7 to 513 combos on up to 8 threads, and calls\n"
             "    of 8,192+ combos on 2-8 threads; for cuda under host execution, small\n"
             "    device memory sizes), each case run with trades recorded and again\n"
             "    metrics-only (the path a sweep takes) and, for fast_cpu and cuda, tallied\n"
             "    (the path of sweep --analysis), its analysis columns compared bit for bit,\n"
             "    shrinking a divergence to a small reproducer of the same kind,\n"
             "  at --time 60 or more, makes one metrics-only call of more than 2^32\n"
             "    bar-combos and checks a sample of its combos against the reference,\n"
             "  checks determinism (the same call twice, reordered, split, alone) and that\n"
             "    invalid combos and series are refused,\n"
             "  proves the harness is not vacuous: every mutant (planted bug) is caught in this\n"
             "    run, and the backend produced trades on real data,\n"
             "  times a fixed sweep against fast_cpu (reported; a gate only with --min-speedup).\n"
             "Each check runs in a child process: a crash is reported as a crash, with the\n"
             "command that reproduces it.\n",
    .opts = CLI_OPTS(validate_opts),
    .epilog = "Environment: SEBT_SHARE_DIR, the folder holding fixtures/ and parity-combos.csv\n"
              "(default: PREFIX/share/sebt beside an installed sebt, or the build folder's share/sebt).\n"
              "\n"
              "Exit codes: 0 every check passed, 1 a check failed (divergence, crash, mutant\n"
              "missed, no trades, too slow), 2 bad usage, bad input or a plugin that does not\n"
              "load, 3 the backend needs a GPU and none is usable.\n",
    .fn = cli_cmd_validate,
};

static int parse_args(int argc, char **argv, validate_args *a)
{
    const char *cmd = argv[0];
    memset(a, 0, sizeof *a);
    a->time_s = 120;
    a->seed = 1;
    a->save_dir = "sebt-validate";
    a->isolate = -1;
    cli_args o;
    int rc = cli_parse(&cli_cmd_validate_spec, argc, argv, &o);
    if (rc >= 0)
        return rc;
    a->no_speed = cli_given(&o, OPT_NO_SPEED);
    a->fail_fast = cli_given(&o, OPT_FAIL_FAST);
    a->big_call_only = cli_given(&o, OPT_BIG_CALL);
    a->speed_only = cli_given(&o, OPT_SPEED_ONLY);
    if (a->speed_only && (a->no_speed || a->big_call_only || cli_given(&o, OPT_REPLAY)))
        return cli_usage_error(cmd, "--speed-only runs the speed stage alone: not with --no-speed, --big-call "
                               "or --replay");
    if (cli_given(&o, OPT_ISOLATE) && cli_given(&o, OPT_NO_ISOLATE))
        return cli_usage_error(cmd, "--isolate and --no-isolate contradict each other");
    if (cli_given(&o, OPT_ISOLATE))
        a->isolate = 1;
    if (cli_given(&o, OPT_NO_ISOLATE))
        a->isolate = 0;
    a->backend = cli_str(&o, OPT_BACKEND);
    if (cli_given(&o, OPT_TIME) && cli_given(&o, OPT_CASES))
        return cli_usage_error(cmd, "give --time or --cases, not both");
    if (cli_given(&o, OPT_TIME))
        a->time_s = o.v[OPT_TIME].r;
    if (cli_given(&o, OPT_CASES))
        a->cases = o.v[OPT_CASES].u;
    if (cli_given(&o, OPT_SEED))
        a->seed = o.v[OPT_SEED].u;
    a->threads = (int)o.v[OPT_THREADS].u;
    for (int k = 0; k < o.v[OPT_DATA].count; k++)
        a->data[a->n_data++] = o.v[OPT_DATA].values[k];
    a->min_speedup = o.v[OPT_MIN_SPEEDUP].r;
    if (cli_given(&o, OPT_SAVE))
        a->save_dir = cli_str(&o, OPT_SAVE);
    a->replay = cli_str(&o, OPT_REPLAY);
    a->json = cli_given(&o, OPT_FORMAT) && o.v[OPT_FORMAT].choice == 1;
    a->junit = cli_str(&o, OPT_JUNIT);
    a->markdown = cli_str(&o, OPT_MARKDOWN);
    a->check_timeout_s = cli_given(&o, OPT_CHECK_TIMEOUT) ? o.v[OPT_CHECK_TIMEOUT].r
                         : 3 * a->time_s + 60 > 600 ? 3 * a->time_s + 60 : 600;
    a->call_timeout_s = cli_given(&o, OPT_CALL_TIMEOUT) ? o.v[OPT_CALL_TIMEOUT].r : CALL_TIMEOUT_DEFAULT_S;
    if (!a->backend)
        return cli_usage_error(cmd, "--backend NAME|PATH is required");
    /* --save holds reproducer folders and the written stage's two files. */
    sebt_path_use paths[MAX_DATA + 5] = { { "--replay", a->replay, SEBT_PATH_INPUT, NULL },
                                          { "--junit", a->junit, SEBT_PATH_OUTPUT, NULL },
                                          { "--markdown", a->markdown, SEBT_PATH_OUTPUT, NULL },
                                          { "--save", a->save_dir, SEBT_PATH_OUTPUT_DIR, "written*|*/*" },
                                          { "--backend", a->backend, SEBT_PATH_INPUT, NULL } };
    for (size_t k = 0; k < a->n_data; k++)
        paths[5 + k] = (sebt_path_use){ "--data", a->data[k], SEBT_PATH_INPUT, NULL };
    rc = cli_check_paths(cmd, paths, 5 + a->n_data);
    return rc != CLI_EXIT_OK ? rc : -1;
}

/* ---- the run ------------------------------------------------------------------------ */

/* A crash gets the command that reproduces it; filled after the fact
 * because the child that knew the details is gone. */
static void crash_replay(v_check *k, const char *what)
{
    if ((k->out.status == V_CRASH || k->out.status == V_ERROR) && !k->out.replay[0])
        snprintf(k->out.replay, sizeof k->out.replay, "%s", what);
}

/* A kernel that broke the protocol (or hung) after its handshake: the
 * requests its process was sent up to the fault, saved as a reproducer
 * under --save (requests.bin and a README) that --replay sends to a fresh
 * process. Kernels run in this process unless --isolate: there, the
 * requests lived in the check's child and are gone. */
static void save_protocol_repro(v_ctx *c, v_check *k)
{
    char dir[PATH_MAX], path[PATH_MAX + 32], abs[PATH_MAX];
    snprintf(dir, sizeof dir, "%s/protocol-%s-%zu", c->a->save_dir, k->stage, c->n_checks);
    if ((mkdir(c->a->save_dir, 0777) != 0 && errno != EEXIST) || (mkdir(dir, 0777) != 0 && errno != EEXIST))
        return;
    snprintf(path, sizeof path, "%s/requests.bin", dir);
    sebt_error err = { 0 };
    if (sebt_kernel_save_requests(c->cand, path, &err) != SEBT_OK) {
        size_t len = strlen(k->out.detail);
        snprintf(k->out.detail + len, sizeof k->out.detail - len, "no reproducer of the requests: %s\n", err.msg);
        return;
    }
    snprintf(k->out.replay, sizeof k->out.replay, "sebt validate --backend %s --replay %s", c->sel,
             realpath(dir, abs) ? abs : dir);
    snprintf(path, sizeof path, "%s/README.txt", dir);
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "sebt validate: %s %s: %s\n\nrequests.bin holds every request sebt sent the kernel's process "
                "after its handshake, up to the one it failed (docs/kernel-protocol.md). To send them again, "
                "one at a time, to a fresh process of the kernel and check every reply:\n\n  %s\n",
                k->stage, k->name, k->out.message, k->out.replay);
        fclose(f);
    }
}

/* --fail-fast stops at the first check that failed, crashed or ended in an
 * error (out of memory, say): the run cannot pass any more, and going on
 * costs a whole validate's time for nothing the verdict needs. */
static bool not_passed_before(const v_ctx *c, const v_check *k)
{
    for (const v_check *p = c->checks; p < k; p++)
        if (p->out.status == V_FAIL || p->out.status == V_CRASH || p->out.status == V_ERROR)
            return true;
    return false;
}

/* Once the backend has hung, every later check of it would hang too (a
 * minute each, or a kernel's SEBT_KERNEL_TIMEOUT): they are skipped, naming
 * the check it hung in; the mutants, which do not run it, still run. */
static void run_check(v_ctx *c, v_check *k, v_fn fn, const void *arg)
{
    if (!k)
        return;
    if (c->hung_in[0] && fn != do_mutant) {
        k->out.status = V_SKIP;
        snprintf(k->out.message, sizeof k->out.message, "not run: the backend hung in %s", c->hung_in);
        return;
    }
    if (c->a->fail_fast && not_passed_before(c, k)) {
        k->out.status = V_SKIP;
        snprintf(k->out.message, sizeof k->out.message, "not run: a check before it did not pass (--fail-fast)");
        return;
    }
    run_isolated(c, fn, arg, k);
    if (k->out.status == V_PASS) {
        c->cand_call_s += k->out.cand_call_s;
        c->cand_units += k->out.cand_units;
    }
    if ((k->out.err_code == SEBT_ERR_PROTOCOL || k->out.err_code == SEBT_ERR_TIMEOUT) && c->kernel && !c->isolate &&
        !c->a->replay)
        save_protocol_repro(c, k);
    if (k->out.err_code == SEBT_ERR_TIMEOUT)
        snprintf(c->hung_in, sizeof c->hung_in, "%s %s", k->stage, k->name);
}

/* ---- the stages, in the order they run ----------------------------------------- */

/* A stage that found nothing to check is an error, not a pass. */
static void nothing_to_check(v_ctx *c, const char *stage, const char *where, const char *what)
{
    v_check *k = add_check(c, stage, "%s", where);
    k->out.status = V_ERROR;
    k->out.err_code = SEBT_ERR_INPUT;
    snprintf(k->out.message, sizeof k->out.message, "no %s under %s", what, where);
    announce(c, k);
}

/* Out of memory before a stage could start its checks: an error (exit 5
 * unless a check failed), not a pass and not a failure. */
static void stage_nomem(v_ctx *c, const char *stage, const char *where, const char *what)
{
    v_check *k = add_check(c, stage, "%s", where);
    if (!k)
        return;
    k->out.status = V_ERROR;
    k->out.err_code = SEBT_ERR_NOMEM;
    snprintf(k->out.message, sizeof k->out.message, "out of memory %s", what);
    announce(c, k);
}

/* --replay DIR: that one fixture and nothing else. */
static void stage_replay_one(v_ctx *c, const char *dir)
{
    char abs[PATH_MAX];
    v_check *k = add_check(c, "replay", "%s", base_name(dir));
    run_check(c, k, do_replay, dir);
    if (k->out.status != V_PASS)
        snprintf(k->out.replay, sizeof k->out.replay, "sebt validate --backend %s --replay %s", c->sel,
                 realpath(dir, abs) ? abs : dir);
    announce(c, k);
}

/* Every fixture of fixtures/regressions against the reference. */
static void stage_replay(v_ctx *c)
{
    char dir[PATH_MAX + 64], **fixtures = NULL;
    snprintf(dir, sizeof dir, "%s/regressions", c->fixtures);
    bool nomem;
    size_t n = list_dir(dir, true, &fixtures, &nomem);
    if (nomem)
        stage_nomem(c, "replay", dir, "listing the regression fixtures");
    else if (n == 0)
        nothing_to_check(c, "replay", dir, "regression fixtures");
    for (size_t i = 0; i < n; i++) {
        v_check *k = add_check(c, "replay", "%s", base_name(fixtures[i]));
        run_check(c, k, do_replay, fixtures[i]);
        if ((k->out.status == V_FAIL || k->out.status == V_CRASH || k->out.status == V_ERROR) && !k->out.replay[0])
            snprintf(k->out.replay, sizeof k->out.replay, "sebt validate --backend %s --replay %s", c->sel,
                     fixtures[i]);
        announce(c, k);
    }
    free_list(fixtures, n);
}

/* The series parity runs on: the oracle's parity set (each file plain and
 * gap-filled, and the one-minute files joined), or each --data file both
 * ways. They live until the process ends (the speed stage reuses them). */
static size_t parity_inputs(v_ctx *c, sebt_parity_input **out, char *dir, size_t dsize)
{
    static sebt_parity_input inputs[MAX_INPUTS];
    static char input_paths[8][SEBT_PARITY_PATH_MAX];
    snprintf(dir, dsize, "%s/data", c->fixtures);
    *out = inputs;
    if (c->a->n_data)
        return sebt_parity_inputs_for_files(c->a->data, c->a->n_data, SEBT_PARITY_BOTH, inputs, MAX_INPUTS);
    return sebt_parity_default_inputs(dir, inputs, MAX_INPUTS, input_paths, 8);
}

/* Parity with the parity combos on every input; adds the trades made. */
static void stage_parity(v_ctx *c, const sebt_parity_input *inputs, size_t n, uint64_t *trades)
{
    char abs[PATH_MAX];
    for (size_t i = 0; i < n; i++) {
        const sebt_parity_input *in = &inputs[i];
        v_check *k = add_check(c, "parity", "%s", in->label);
        run_check(c, k, do_parity, in);
        *trades += k->out.trades;
        if ((k->out.status == V_FAIL || k->out.status == V_CRASH || k->out.status == V_ERROR) && !k->out.replay[0]) {
            /* A joined series exists only in the bundled set: replay the set. */
            if (in->n_paths == 1)
                snprintf(k->out.replay, sizeof k->out.replay,
                         "sebt parity --backend %s --combos %s --data %s --gaps %s", c->sel, c->combos_path,
                         realpath(in->paths[0], abs) ? abs : in->paths[0], in->fill_gaps ? "filled" : "plain");
            else
                snprintf(k->out.replay, sizeof k->out.replay, "sebt parity --backend %s --combos %s", c->sel,
                         c->combos_path);
        }
        announce(c, k);
    }
}

/* Parity on grid-shaped combos: the longest single bundled file as loaded. */
static void stage_parity_grid(v_ctx *c, const sebt_parity_input *inputs, size_t n, uint64_t *trades)
{
    const sebt_parity_input *in = NULL;
    for (size_t i = 0; i < n; i++)
        if (inputs[i].n_paths == 1 && !inputs[i].fill_gaps && (!in || strstr(inputs[i].paths[0], "15m")))
            in = &inputs[i];
    if (!in)
        return;
    char abs[PATH_MAX], grid[PATH_MAX];
    v_check *k = add_check(c, "parity", "%s, %d grid-shaped combos", in->label, SEBT_PARITY_GRID_COMBOS);
    run_check(c, k, do_parity_grid, in);
    *trades += k->out.trades;
    if ((k->out.status == V_FAIL || k->out.status == V_CRASH) && !k->out.replay[0] &&
        write_grid_file(c->a->save_dir, grid, sizeof grid))
        snprintf(k->out.replay, sizeof k->out.replay, "sebt parity --backend %s --grid %s --data %s --gaps plain",
                 c->sel, grid, realpath(in->paths[0], abs) ? abs : in->paths[0]);
    announce(c, k);
}

/* "~14 h": a duration for people. */
static void duration_text(double s, char *buf, size_t size)
{
    if (s < 120)
        snprintf(buf, size, "~%.0f s", s);
    else if (s < 7200)
        snprintf(buf, size, "~%.0f min", s / 60);
    else
        snprintf(buf, size, "~%.0f h", s / 3600);
}

/* The big call's predicted seconds at the speed the candidate's calls so
 * far were measured at; 0 when none was measured. */
static double big_call_predicted_s(const v_ctx *c)
{
    if (c->cand_units <= 0 || c->cand_call_s <= 0)
        return 0;
    double combos = (double)(SEBT_BIG_CALL_BAR_COMBOS / BIG_CALL_BARS + 1);
    combos += combos / 64 + 64;
    return c->cand_call_s / c->cand_units * combos * BIG_CALL_BARS;
}

/* Whether the big call fits the run's budget; when not, k says why it is
 * not checked. The budget's first part is the user's (--time, --cases);
 * the second the backend's measured speed against the check's time limit,
 * so a slow backend or a slow machine gives "not checked", never a hang. */
static bool big_call_fits(const v_ctx *c, v_check *k, double predicted_s)
{
    const validate_args *a = c->a;
    if (a->big_call_only)
        return true;
    if (a->cases ? a->cases < BIG_CALL_MIN_CASES : a->time_s < BIG_CALL_MIN_TIME) {
        k->out.status = V_SKIP;
        snprintf(k->out.message, sizeof k->out.message, "not checked: runs at --time %d or more (or --cases %d or "
                 "more)", BIG_CALL_MIN_TIME, BIG_CALL_MIN_CASES);
        return false;
    }
    if (predicted_s * BIG_CALL_MARGIN <= c->check_timeout_s)
        return true;
    char need[32];
    duration_text(predicted_s, need, sizeof need);
    k->out.status = V_SKIP;
    snprintf(k->out.message, sizeof k->out.message, "not checked: %s at this backend's measured %.3g backtests/s "
             "(of %d bars), past the check's limit of %.0f s / %d; --big-call --check-timeout %.0f runs it", need,
             c->cand_units / c->cand_call_s / BIG_CALL_BARS, BIG_CALL_BARS, c->check_timeout_s, BIG_CALL_MARGIN,
             ceil(predicted_s * BIG_CALL_MARGIN));
    return false;
}

/* The big call runs where the budget affords it: it costs a sweep of
 * ~29,000 combos over 150,000 bars, and 24 reference runs. */
static void stage_big_call(v_ctx *c)
{
    const validate_args *a = c->a;
    v_check *k = add_check(c, "big-call", "more than 2^32 bar-combos in one call");
    if (!k)
        return;
    double predicted_s = big_call_predicted_s(c);
    if (big_call_fits(c, k, predicted_s)) {
        run_check(c, k, do_big_call, NULL);
        if (k->out.err_code == SEBT_ERR_TIMEOUT && predicted_s > 0) {
            size_t len = strlen(k->out.message);
            snprintf(k->out.message + len, sizeof k->out.message - len, "; its predicted time was ~%.0f s",
                     predicted_s);
        }
        if (k->out.status != V_PASS && k->out.status != V_SKIP)
            snprintf(k->out.replay, sizeof k->out.replay, "sebt validate --backend %s --big-call --seed %" PRIu64
                     " --threads %d", c->sel, a->seed, big_call_threads(a));
    }
    announce(c, k);
}

static void stage_fuzz(v_ctx *c)
{
    char buf[PATH_MAX + 64];
    v_check *k = c->a->cases ? add_check(c, "fuzz", "seed %" PRIu64 ", %" PRIu64 " cases", c->a->seed, c->a->cases)
                             : add_check(c, "fuzz", "seed %" PRIu64 ", %g s", c->a->seed, c->a->time_s);
    run_check(c, k, do_fuzz, NULL);
    /* A crash: that one case again, as it ran (kind, number, threads). */
    const v_outcome *o = &k->out;
    if (o->at_known)
        snprintf(buf, sizeof buf, "sebt fuzz --backend %s --seed %" PRIu64 " --threads %d --%s %" PRIu64 "%s%s%s",
                 c->sel, o->at_seed, o->at_threads, o->at_big ? "big-case" : "case", o->at_case,
                 o->at_big ? " --base " : "", o->at_big ? c->fixtures : "",
                 o->at_big ? "/data/BTCUSDT-15m-2017-2021.csv.gz" : "");
    else
        snprintf(buf, sizeof buf, "sebt fuzz --backend %s --seed %" PRIu64 " --iterations 1 --no-save", c->sel,
                 c->a->seed);
    crash_replay(k, buf);
    if (k->out.status == V_CRASH && o->at_known) {
        size_t len = strlen(k->out.message);
        snprintf(k->out.message + len, sizeof k->out.message - len, " in fuzz %s %" PRIu64 " of seed %" PRIu64
                 " (%d thread%s)", o->at_big ? "big case" : "case", o->at_case, o->at_seed, o->at_threads,
                 o->at_threads == 1 ? "" : "s");
    }
    announce(c, k);
}

/* Determinism, independence and refusing bad input: judged without the reference. */
static void stage_own_checks(v_ctx *c)
{
    char buf[PATH_MAX + 64];
    v_check *k = add_check(c, "determinism", "same call, order, threads, split, companions");
    run_check(c, k, do_determinism, NULL);
    snprintf(buf, sizeof buf, "sebt validate --backend %s --seed %" PRIu64 " --time 1", c->sel, c->a->seed);
    crash_replay(k, buf);
    announce(c, k);

    k = add_check(c, "bad-input", "invalid combos and series refused");
    run_check(c, k, do_bad_input, NULL);
    snprintf(buf, sizeof buf, "sebt validate --backend %s --time 1", c->sel);
    crash_replay(k, buf);
    announce(c, k);
}

/* The written sweep: a real streamed sweep through the writer in each
 * format, read back and verified in full (cli/sweep_proof*.c). */
static void stage_written_sweep(v_ctx *c)
{
    static const char *const formats[] = { "csv", "json", "npy" };
    for (size_t i = 0; i < sizeof formats / sizeof formats[0]; i++) {
        v_check *k = add_check(c, "written-sweep", "%s, read back", formats[i]);
        run_check(c, k, do_written_sweep, formats[i]);
        announce(c, k);
    }
    v_check *k = add_check(c, "written-sweep", "series cache against a fresh parse");
    run_check(c, k, do_series_cache, NULL);
    announce(c, k);
}

/* The harness is not vacuous: every mutant is caught, and the backend
 * traded on real data (parity on a backend that never trades proves nothing). */
static void stage_anti_vacuity(v_ctx *c, uint64_t trades)
{
    for (size_t i = 0; i < sebt_mutant_count(); i++) {
        const sebt_backend *m = sebt_mutant_at(i);
        v_check *k = add_check(c, "anti-vacuity", "%s", m->name);
        run_check(c, k, do_mutant, m);
        announce(c, k);
    }
    v_check *k = add_check(c, "anti-vacuity", "trades on real data");
    bool parity_ran = false;
    for (size_t i = 0; i < c->n_checks; i++)
        parity_ran |= strcmp(c->checks[i].stage, "parity") == 0 && c->checks[i].out.status == V_PASS;
    if (!parity_ran) {
        k->out.status = V_SKIP;
        snprintf(k->out.message, sizeof k->out.message, "no parity check passed to count trades in");
    } else if (trades == 0) {
        k->out.status = V_FAIL;
        snprintf(k->out.message, sizeof k->out.message, "%s made no trade on any bundled series with the "
                 "parity combos: parity there proves nothing", c->cand->name);
    } else {
        k->out.status = V_PASS;
        snprintf(k->out.message, sizeof k->out.message, "%" PRIu64 " trades over the parity checks", trades);
    }
    k->out.trades = trades;
    announce(c, k);
}

/* A fixed sweep timed against fast_cpu, on the January 2019 minutes when
 * they are among the inputs. */
static void stage_speed(v_ctx *c, const sebt_parity_input *inputs, size_t n)
{
    const char *speed_data = NULL;
    for (size_t i = 0; i < n && !speed_data; i++)
        if (inputs[i].n_paths == 1 && strstr(inputs[i].paths[0], "BTCUSDT-1m-2019-01"))
            speed_data = inputs[i].paths[0];
    if (!speed_data && n)
        speed_data = inputs[0].paths[0];
    v_check *k = add_check(c, "speed", "fixed sweep vs fast_cpu");
    if (c->a->no_speed || !speed_data) {
        k->out.status = V_SKIP;
        snprintf(k->out.message, sizeof k->out.message, "%s", c->a->no_speed ? "--no-speed" : "no data");
    } else {
        run_check(c, k, do_speed, speed_data);
        snprintf(k->name, sizeof k->name, "fixed sweep vs fast_cpu (%s)", base_name(speed_data));
    }
    announce(c, k);
}

/* A broken setup (2) or a missing device (3) says more than the checks it
 * stopped; otherwise any failed check is 1. */
static int exit_code(const v_ctx *c)
{
    bool failed = false, error = false, nodevice = false, nomem = false;
    for (size_t i = 0; i < c->n_checks; i++) {
        const v_outcome *o = &c->checks[i].out;
        failed |= o->status == V_FAIL || o->status == V_CRASH;
        if (o->status == V_ERROR) {
            error = true;
            nodevice |= o->err_code == SEBT_ERR_NODEVICE;
            nomem |= o->err_code == SEBT_ERR_NOMEM;
        }
    }
    /* Out of memory: nothing is known to be wrong, the run could not finish. */
    return nodevice ? CLI_EXIT_NO_DEVICE : failed ? CLI_EXIT_CHECK_FAILED : nomem ? CLI_EXIT_NOMEM
         : error ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

/* Opens the backend, finds the bundled data and loads the parity combos.
 * Returns -1 to go on, else the exit code (printed). */
static int setup(const char *cmd, const validate_args *a, v_ctx *c)
{
    int rc = cli_select_oracle_backend(cmd, a->backend, &c->cand);
    if (rc != CLI_EXIT_OK)
        return rc;
    c->sel = sebt_backend_selector(c->cand);
    /* The built-in cuda backend holds a CUDA context from the moment it is
     * opened, and a CUDA runtime does not survive fork: it runs in-process
     * unless asked. A plugin should open its device lazily (docs/kernels.md). */
    /* A kernel command (exec:) is isolated already: it runs in its own
     * process, and whatever it does is reported as the kernel's. Run in
     * this process, one kernel serves the whole session instead of being
     * started (and compiled) again for every check. */
    bool kernel = strncmp(c->sel, "exec:", 5) == 0 || strncmp(c->sel, "'exec:", 6) == 0;
    c->isolate = a->isolate >= 0 ? a->isolate == 1 : strcmp(c->sel, "cuda") != 0 && !kernel;
    c->kernel = kernel;
    if (kernel) {
        sebt_kernel_record(c->cand, NULL);
        watch_kernel(c);
    }
    cli_share_paths(c->fixtures, sizeof c->fixtures, c->combos_path, sizeof c->combos_path);
    /* Absolute, so the commands printed for a failure work from anywhere. */
    char abs[PATH_MAX];
    if (realpath(c->fixtures, abs))
        snprintf(c->fixtures, sizeof c->fixtures, "%s", abs);
    if (realpath(c->combos_path, abs))
        snprintf(c->combos_path, sizeof c->combos_path, "%s", abs);
    sebt_error err = { 0 };
    if (sebt_combos_load(c->combos_path, &c->combos, &c->n_combos, &err) != SEBT_OK) {
        /* Out of memory says nothing about where the share folder is. */
        bool nomem = err.code == SEBT_ERR_NOMEM;
        fprintf(stderr, "sebt %s: error: the parity combos: %s%s\n", cmd, err.msg,
                nomem ? "" : " (set SEBT_SHARE_DIR to the folder holding fixtures/ and parity-combos.csv)");
        return nomem ? CLI_EXIT_NOMEM : CLI_EXIT_USAGE;
    }
    c->checks = calloc(MAX_CHECKS, sizeof *c->checks);
    if (!c->checks) {
        free(c->combos);
        fprintf(stderr, "sebt %s: error: out of memory\n", cmd);
        return CLI_EXIT_NOMEM;
    }
    return -1;
}

int cli_cmd_validate(int argc, char **argv)
{
    const char *cmd = argv[0];
    validate_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    v_ctx c = { .a = &a, .check_timeout_s = a.check_timeout_s };
    if (sebt_backend_is_path(a.backend) && a.isolate != 0 &&
        (rc = probe_plugin(cmd, a.backend, a.call_timeout_s)) != CLI_EXIT_OK)
        return rc;
    rc = setup(cmd, &a, &c);
    if (rc >= 0)
        return rc;
    /* The parent keeps the combos and the list of checks; it never runs a
     * backend, so a crash in one check leaves the others to run. */
    signal(SIGPIPE, SIG_IGN);

    char contract[64];
    cli_contract_text(&c.cand->contract, contract, sizeof contract);
    if (!a.json)
        printf("validate %s (%s)%s%s\n", c.cand->name, contract, strcmp(c.sel, c.cand->name) ? " from " : "",
               strcmp(c.sel, c.cand->name) ? c.sel : "");

    if (a.replay) {
        stage_replay_one(&c, a.replay);
    } else if (a.big_call_only) {
        stage_big_call(&c);
    } else if (a.speed_only) {
        sebt_parity_input *inputs;
        char data_dir[PATH_MAX + 64];
        size_t n_inputs = parity_inputs(&c, &inputs, data_dir, sizeof data_dir);
        stage_speed(&c, inputs, n_inputs);
    } else {
        stage_replay(&c);
        sebt_parity_input *inputs;
        char data_dir[PATH_MAX + 64];
        size_t n_inputs = parity_inputs(&c, &inputs, data_dir, sizeof data_dir);
        if (n_inputs == 0)
            nothing_to_check(&c, "parity", data_dir, "bundled series");
        uint64_t trades = 0;
        stage_parity(&c, inputs, n_inputs, &trades);
        stage_parity_grid(&c, inputs, n_inputs, &trades);
        stage_fuzz(&c);
        stage_big_call(&c);
        stage_own_checks(&c);
        stage_written_sweep(&c);
        stage_anti_vacuity(&c, trades);
        stage_speed(&c, inputs, n_inputs);
    }

    int code = exit_code(&c);
    if (a.json)
        write_json(&c, code);
    else
        write_text(&c, code);
    int wrc = CLI_EXIT_OK;
    if (a.junit && write_junit(&c) != CLI_EXIT_OK)
        wrc = CLI_EXIT_USAGE;
    if (a.markdown && write_markdown(&c, code) != CLI_EXIT_OK)
        wrc = CLI_EXIT_USAGE;
    free(c.checks);
    free(c.combos);
    if (cli_close_stdout(cmd))
        wrc = CLI_EXIT_USAGE;
    return code != CLI_EXIT_OK ? code : wrc;
}
