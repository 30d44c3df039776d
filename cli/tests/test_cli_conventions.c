/* The `sebt` command behaves like a Unix tool:
 * one error format, `sebt help CMD`, a quiet end on a closed pipe, and no
 * result that overflows a double is ever written. Each test spawns the
 * built binary (SEBT_BINARY). */
#define _XOPEN_SOURCE 700 /* posix_openpt */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run_sebt.h"

SEBT_SCRATCH_SUITE(conventions, "conv");

#define DATA SEBT_FIXTURES_DIR "/data/BTCUSDT-1m-2019-01.csv.gz"

static const char *write_file(const char *name, const char *text)
{
    static char path[4][300];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, 300, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
    return p;
}

/* ---- errors and help ------------------------------------------------------ */

Test(conventions, usage_errors_read_sebt_cmd_error_and_point_to_help)
{
    const char *cmds[] = { "run", "features", "sweep", "parity", "fuzz", "report", "check-gpu" };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        proc *p = run(cmds[i], "--no-such-option", NULL);
        cr_assert_eq(p->code, 2, "sebt %s: exit %d", cmds[i], p->code);
        char want[128];
        snprintf(want, sizeof want, "sebt %s: error: ", cmds[i]);
        cr_assert(strncmp(p->err, want, strlen(want)) == 0, "stderr of sebt %s:\n%s", cmds[i], p->err);
        snprintf(want, sizeof want, "Try 'sebt help %s'.", cmds[i]);
        cr_assert_not_null(strstr(p->err, want), "stderr of sebt %s:\n%s", cmds[i], p->err);
    }
    proc *p = run("frobnicate", NULL);
    cr_assert_eq(p->code, 2);
    cr_assert(strncmp(p->err, "sebt: error: unknown command 'frobnicate'", 41) == 0, "%s", p->err);
}

Test(conventions, help_cmd_prints_the_commands_help)
{
    const char *cmds[] = { "run", "features", "backends", "sweep", "parity", "fuzz", "report", "check-gpu" };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        proc *p = run(cmds[i], "--help", NULL);
        cr_assert_eq(p->code, 0);
        static char direct[1 << 16];
        strcpy(direct, p->out);
        p = run("help", cmds[i], NULL);
        cr_assert_eq(p->code, 0, "sebt help %s: exit %d: %s", cmds[i], p->code, p->err);
        cr_assert_str_eq(p->out, direct, "sebt help %s differs from sebt %s --help", cmds[i], cmds[i]);
        cr_assert_str_empty(p->err);
    }
    proc *p = run("help", "nope", NULL);
    cr_assert_eq(p->code, 2);
    cr_assert(strncmp(p->err, "sebt help: error: unknown command 'nope'", 40) == 0, "%s", p->err);
    p = run("help", NULL);
    cr_assert_eq(p->code, 0);
    cr_assert_not_null(strstr(p->out, "Usage: sebt COMMAND"));
}

/* ---- a closed pipe --------------------------------------------------------- */

/* `sebt run --format csv ... | head -c 1`, with SIGPIPE ignored by the
 * parent as some launchers leave it: nothing on stderr, death by SIGPIPE. */
/* A slip of a key gets the name it most likely meant, from the tables sebt
 * reads names from (cli/main.c's commands, each command's options,
 * sebt_param_table); a word near none gets no guess. */
Test(conventions, a_mistyped_name_gets_did_you_mean)
{
    proc *p = run("swep", NULL);
    cr_assert_eq(p->code, 2);
    cr_assert(strncmp(p->err, "sebt: error: unknown command 'swep'; did you mean sweep?\n", 56) == 0, "%s", p->err);
    p = run("help", "vaildate", NULL);
    cr_assert_eq(p->code, 2);
    cr_assert_not_null(strstr(p->err, "sebt help: error: unknown command 'vaildate'; did you mean validate?"), "%s",
                       p->err);
    p = run("run", "--data", DATA, "--sett", "vol_z=2", NULL);
    cr_assert_eq(p->code, 2);
    cr_assert_not_null(strstr(p->err, "sebt run: error: unknown option '--sett'; did you mean --set?"), "%s", p->err);
    p = run("sweep", "--data", DATA, "--grdi=g.txt", NULL);
    cr_assert_eq(p->code, 2);
    cr_assert_not_null(strstr(p->err, "unknown option '--grdi=g.txt'; did you mean --grid?"), "%s", p->err);
    p = run("run", "--data", DATA, "--set", "vol_zz=2", NULL);
    cr_assert_eq(p->code, 2);
    cr_assert_not_null(strstr(p->err, "unknown parameter 'vol_zz': did you mean vol_z?"), "%s", p->err);
    const char *grid = write_file("typo.grid", "ema_fast = 24, 48\nvol_zz = 1.5\n");
    p = run("sweep", "--data", DATA, "--grid", grid, NULL);
    cr_assert_eq(p->code, 2);
    cr_assert_not_null(strstr(p->err, "typo.grid:2: unknown parameter 'vol_zz': did you mean vol_z?"), "%s", p->err);
    p = run("frobnicate", NULL);
    cr_assert_null(strstr(p->err, "did you mean"), "%s", p->err);
    p = run("run", "--data", DATA, "--zz-nothing-like-it", NULL);
    cr_assert_eq(p->code, 2);
    cr_assert_null(strstr(p->err, "did you mean"), "%s", p->err);
}

/* A message names what went wrong and what was meant: every choice of a
 * long list (none cut off) and the nearest; a heading of the text table
 * typed as a column name gets the column it heads. */
Test(conventions, a_wrong_key_or_column_is_answered_with_the_right_one)
{
    proc *p = run("sweep", "--data", DATA, "--by", "Sharpe", NULL);
    cr_assert_eq(p->code, 2);
    cr_assert_not_null(strstr(p->err, "bars_in_market, exposure, sharpe_annual, total_return_pct, annual_return_pct, "
                              "buy_hold_pct, volatility_pct, return_sharpe, return_sortino, calmar, max_dd_pct, "
                              "avg_dd_pct, longest_dd_bars, best_trade_pct, worst_trade_pct, avg_trade_pct, "
                              "expectancy_pct, avg_trade_bars, longest_trade_bars or sqn, got 'Sharpe'; did you "
                              "mean sharpe?"),
                       "%s", p->err);
    const char *grid = write_file("msg.grid", "ema_fast = 24, 48\n");
    p = run("sweep", "--data", DATA, "--grid", grid, "--top", "1", "--where", "trades >= 30", NULL);
    cr_assert_eq(p->code, 2);
    cr_assert_not_null(strstr(p->err, "no column named 'trades': the text table's 'trades' is the column 'n'"), "%s",
                       p->err);
}

/* "vol_z = 1.5, 2,0" is not three values: refused, naming file:line and
 * the two ways to write what was meant (docs/cli.md, "Grid files"). */
Test(conventions, a_decimal_comma_in_a_grid_is_refused)
{
    const char *grid = write_file("comma.grid", "ema_fast = 24\nvol_z = 1.5, 2,0\n");
    proc *p = run("sweep", "--data", DATA, "--grid", grid, NULL);
    cr_assert_eq(p->code, 2, "%s", p->err);
    cr_assert_not_null(strstr(p->err, "comma.grid:2: parameter vol_z: '2,0' looks like a number written with a "
                                      "decimal comma"), "%s", p->err);
    cr_assert_not_null(strstr(p->err, "write 2.0 for one value, or '2, 0'"), "%s", p->err);
    cr_assert_str_empty(p->out);
}

/* Every exit code of the guide, 0 to 5, in the top-level help. */
Test(conventions, top_level_help_lists_every_exit_code)
{
    proc *p = run("--help", NULL);
    cr_assert_eq(p->code, 0);
    const char *codes[] = { "0 success", "1 a check failed", "2 bad usage or input", "3 no usable GPU",
                            "4 inconclusive", "5 out of memory" };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        cr_assert_not_null(strstr(p->out, codes[i]), "sebt --help lacks '%s':\n%s", codes[i], p->out);
}

Test(conventions, closed_pipe_ends_quietly_even_when_sigpipe_was_ignored)
{
    for (int ignored = 0; ignored < 2; ignored++) {
        int out[2], err[2];
        cr_assert_eq(pipe(out), 0);
        cr_assert_eq(pipe(err), 0);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_adddup2(&fa, out[1], 1);
        posix_spawn_file_actions_adddup2(&fa, err[1], 2);
        posix_spawn_file_actions_addclose(&fa, out[0]);
        posix_spawn_file_actions_addclose(&fa, err[0]);
        void (*old)(int) = signal(SIGPIPE, ignored ? SIG_IGN : SIG_DFL);
        /* 3001 rows (600 KB), more than a pipe holds: sebt is still writing
         * when the reader goes. Three bars keep it fast under ASan. */
        const char *argv[] = { SEBT_BINARY, "sweep", "--data", SEBT_FIXTURES_DIR "/loader/tiny.csv", "--grid", NULL,
                               NULL };
        argv[5] = write_file("g.txt", "vol_z = 0:30:0.01\n");
        pid_t pid;
        cr_assert_eq(posix_spawn(&pid, SEBT_BINARY, &fa, NULL, (char *const *)argv, environ), 0);
        signal(SIGPIPE, old);
        posix_spawn_file_actions_destroy(&fa);
        close(out[1]);
        close(err[1]);
        char c;
        cr_assert_eq(read(out[0], &c, 1), 1);
        close(out[0]); /* the reader goes away after one byte */
        char buf[4096];
        ssize_t n = read(err[0], buf, sizeof buf - 1);
        buf[n > 0 ? n : 0] = '\0';
        close(err[0]);
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_assert_str_empty(buf, "stderr (SIGPIPE %s): %s", ignored ? "ignored" : "default", buf);
        cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE, "status %d", st);
    }
}

/* ---- results that overflow a double (docs/decisions.md) -------------------- */

Test(conventions, run_refuses_a_result_that_overflows)
{
    proc *p = run("run", "--data", DATA, "--set", "fee_bp=1e308", NULL);
    cr_assert_eq(p->code, 2, "%s", p->err);
    cr_assert_str_empty(p->out);
    cr_assert(strncmp(p->err, "sebt run: error: combo 0: trade 1 (signal bar ", 46) == 0, "%s", p->err);
    cr_assert_not_null(strstr(p->err, "pnl is -inf: the result does not fit a double (from fee_bp=1e+308)"), "%s",
                       p->err);
    p = run("run", "--data", DATA, "--set", "atr_stop_mult=1e308", NULL);
    cr_assert_eq(p->code, 2, "%s", p->err);
    cr_assert_not_null(strstr(p->err, "stop is -inf: the result does not fit a double (from atr_stop_mult=1e+308)"),
                       "%s", p->err);
    /* Large but representable: a run, with no null in it. */
    p = run("run", "--data", DATA, "--set", "atr_stop_mult=1e300", NULL);
    cr_assert_eq(p->code, 0, "%s", p->err);
    char *oae = strstr(p->out, "\"open_at_end\":null");
    if (oae)
        memcpy(oae, "\"open_at_end\":NULL", 18); /* the one null that is no number */
    /* SQN, sqrt(n) mean(R) / sd(R), is undefined here, not overflowed:
     * every R is about 1e-300 of a unit, their spread underflows to 0. */
    char *sqn = strstr(p->out, "\"sqn\":null");
    cr_assert_not_null(sqn, "%s", p->out);
    memcpy(sqn, "\"sqn\":NULL", 10);
    cr_assert_null(strstr(p->out, "null"), "a null in: %s", p->out);
}

Test(conventions, sweep_refuses_a_combo_that_overflows)
{
    const char *combos = write_file("c.csv", "fee_bp\n5\n1e308\n");
    const char *out = write_file("out.csv", "previous\n");
    proc *p = run("sweep", "--data", DATA, "--combos", combos, "--output", out, NULL);
    cr_assert_eq(p->code, 2, "%s", p->err);
    cr_assert(strncmp(p->err, "sebt sweep: error: combo 1: metric avg_r is -inf", 48) == 0, "%s", p->err);
    char text[64];
    FILE *f = fopen(out, "r");
    cr_assert_not_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    cr_assert_str_eq(text, "previous\n");
}

/* ---- progress bars ---------------------------------------------------------- */

/* sebt fuzz --time T on a terminal (a pseudo-terminal as stderr, CI unset):
 * at most ~10 redraws a second, each with its unit (seconds, not the
 * tenths the fuzzer counts in). */
Test(conventions, progress_bar_redraws_at_most_ten_times_a_second_with_units, .timeout = 120)
{
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    cr_assert_geq(m, 0);
    cr_assert_eq(grantpt(m), 0);
    cr_assert_eq(unlockpt(m), 0);
    const char *slave = ptsname(m);
    cr_assert_not_null(slave);
    char *envp[64];
    int ne = 0;
    for (char **e = environ; *e && ne < 62; e++)
        if (strncmp(*e, "CI=", 3) != 0)
            envp[ne++] = *e;
    envp[ne] = NULL;
    char out[300];
    snprintf(out, sizeof out, "%s/out", dir);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, slave, O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, m);
    /* The bar is redrawn between cases, and the fuzz's wide call (case 18,
     * 8,192+ combos on the reference) holds the loop for a second here and
     * for 5 to 15 s under the sanitizers on a busy machine: long enough a
     * run that the cases after it draw the bar either way. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
    const int seconds = 40;
#else
    const int seconds = 8;
#endif
    char time_arg[16], unit[32];
    snprintf(time_arg, sizeof time_arg, "%d", seconds);
    snprintf(unit, sizeof unit, "/%d.0 s ", seconds);
    const char *argv[] = { SEBT_BINARY, "fuzz", "--backend", "reference", "--time", time_arg, "--no-save", NULL };
    pid_t pid;
    cr_assert_eq(posix_spawn(&pid, SEBT_BINARY, &fa, NULL, (char *const *)argv, envp), 0);
    posix_spawn_file_actions_destroy(&fa);
    static char buf[1 << 20];
    size_t len = 0;
    for (;;) {
        ssize_t n = read(m, buf + len, sizeof buf - 1 - len);
        if (n <= 0)
            break; /* EIO once the child has closed the terminal */
        len += (size_t)n;
    }
    buf[len] = '\0';
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    close(m);
    cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, buf);
    int draws = 0;
    for (const char *p = buf; (p = strstr(p, "\rfuzz [")); p++)
        draws++;
    /* Drawn from the first second on, at most 10 times a second. */
    cr_assert_gt(draws, 0, "no progress bar on a terminal: %s", buf);
    cr_assert_leq(draws, 10 * seconds + 5, "%d redraws in %d s", draws, seconds);
    cr_assert_not_null(strstr(buf, unit), "no unit in: %s", buf);
}

/* ---- one --threads rule; a schema in every JSON document -------------------- */

Test(conventions, threads_has_one_rule_in_every_command)
{
    const char *bad[] = { "0", "4097", "x", "-1", "2.5" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char sweep_err[512];
        proc *p = run("sweep", "--data", DATA, "--grid", "g.txt", "--threads", bad[i], NULL);
        cr_assert_eq(p->code, 2);
        /* The message after "sebt CMD:", up to the end of its line. */
        snprintf(sweep_err, sizeof sweep_err, "%.*s", (int)strcspn(strchr(p->err, ':'), "\n"),
                 strchr(p->err, ':'));
        p = run("parity", "--data", DATA, "--grid", "g.txt", "--threads", bad[i], NULL);
        cr_assert_eq(p->code, 2);
        cr_assert_not_null(strstr(p->err, "--threads expects a whole number from 1 to 4096"), "%s", p->err);
        cr_assert(strncmp(strchr(p->err, ':'), sweep_err, strlen(sweep_err)) == 0,
                  "sweep and parity differ on --threads %s: %s", bad[i], p->err);
    }
}

Test(conventions, json_documents_start_with_their_schema)
{
    proc *p = run("run", "--data", DATA, NULL);
    cr_assert_eq(p->code, 0, "%s", p->err);
    cr_assert(strncmp(p->out, "{\n  \"schema\":\"sebt-run/1\",\n", 27) == 0, "%.80s", p->out);
    p = run("backends", "--format", "json", NULL);
    cr_assert_eq(p->code, 0, "%s", p->err);
    cr_assert(strncmp(p->out, "{\n  \"schema\":\"sebt-backends/1\",\n", 32) == 0, "%.80s", p->out);
    const char *grid = write_file("g.txt", "vol_z = 1, 2\n");
    p = run("sweep", "--data", DATA, "--grid", grid, "--format", "json", NULL);
    cr_assert_eq(p->code, 0, "%s", p->err);
    cr_assert(strncmp(p->out, "{\n  \"schema\":\"sebt-sweep/1\",\n", 29) == 0, "%.80s", p->out);
}
