/* `sebt sweep` as a user meets it: spawns SEBT_BINARY and checks exit
 * codes, the rows (input order, one per combo), --top, --trades, errors. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DATA SEBT_FIXTURES_DIR "/data/BTCUSDT-15m-2017-2021.csv.gz"

/* The scratch paths below read /tmp/sebt_test_*; several checkouts run this
 * suite at once on one machine, so each process rewrites that prefix to one
 * of its own (same length) wherever a path or command line is used. */
static const char *fix(const char *in)
{
    static char buf[4][4096];
    static int k;
    char *o = buf[k = (k + 1) % 4];
    char mine[32];
    snprintf(mine, sizeof mine, "/tmp/s%08u_", (unsigned)getpid() % 100000000u);
    size_t n = 0;
    for (const char *p = in; *p && n + 16 < sizeof buf[0];) {
        if (strncmp(p, "/tmp/sebt_test_", 15) == 0) {
            memcpy(o + n, mine, 15);
            n += 15;
            p += 15;
        } else {
            o[n++] = *p++;
        }
    }
    o[n] = '\0';
    return o;
}
#define fopen(path, mode) fopen(fix(path), mode)
#define unlink(path) unlink(fix(path))
#define system(cmd) system(fix(cmd))
#define popen(cmd, mode) popen(fix(cmd), mode)

static char out[1 << 20], errbuf[8192];

/* Runs a shell command line with stdout and stderr captured; returns the
 * exit code. */
static int run(const char *cmdline)
{
    char full[4096];
    char ef[64] = "/tmp/sebt_sweep_err_XXXXXX";
    int efd = mkstemp(ef);
    cr_assert(efd >= 0);
    close(efd);
    snprintf(full, sizeof full, "%s 2>%s", cmdline, ef);
    FILE *p = popen(full, "r");
    cr_assert_not_null(p);
    size_t n = fread(out, 1, sizeof out - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    FILE *e = fopen(ef, "r");
    n = e ? fread(errbuf, 1, sizeof errbuf - 1, e) : 0;
    errbuf[n] = '\0';
    if (e)
        fclose(e);
    unlink(ef);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

Test(sweep_cli, grid_rows_in_input_order_any_threads)
{
    write_file("/tmp/sebt_test_grid.txt", "vol_z = 2.5, 1.5\nmax_hold = 24:48:24\n");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s sweep --data %s --grid /tmp/sebt_test_grid.txt --threads 1", SEBT_BINARY, DATA);
    cr_assert_eq(run(cmd), 0, "%s", errbuf);
    cr_assert_eq(count_lines(out), 5, "%s", out);
    cr_assert(strncmp(out, "combo,ema_fast,", 15) == 0);
    char *one = strdup(out);
    /* Row 0 is vol_z 2.5 / max_hold 24, row 3 vol_z 1.5 / max_hold 48. */
    cr_assert(strstr(one, "\n0,96,672,672,96,2.5,"), "%s", one);
    cr_assert(strstr(one, "\n3,96,672,672,96,1.5,"), "%s", one);
    snprintf(cmd, sizeof cmd, "%s sweep --data %s --grid /tmp/sebt_test_grid.txt --threads 2", SEBT_BINARY, DATA);
    cr_assert_eq(run(cmd), 0, "%s", errbuf);
    cr_assert_str_eq(out, one, "thread count changed the output");
    free(one);
    unlink("/tmp/sebt_test_grid.txt");
}

Test(sweep_cli, top_by_metric_and_trades_files)
{
    write_file("/tmp/sebt_test_combos.csv", "vol_z,reward_r\n2.0,1.0\n1.5,3.0\n3.0,2.0\n");
    system("rm -rf /tmp/sebt_test_trades");
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s sweep --data %s --combos /tmp/sebt_test_combos.csv --top 2 --by n --trades /tmp/sebt_test_trades",
             SEBT_BINARY, DATA);
    cr_assert_eq(run(cmd), 0, "%s", errbuf);
    cr_assert_eq(count_lines(out), 3, "%s", out);
    /* Rows best first by n; the combo left out has no more trades than the
     * last kept, and only kept combos get a trades file. */
    size_t kept[2];
    long n_kept[2];
    const char *line = strchr(out, '\n') + 1;
    for (int r = 0; r < 2; r++) {
        kept[r] = strtoul(line, NULL, 10);
        const char *c = line;
        for (int col = 0; col < 16; col++)
            c = strchr(c, ',') + 1;
        n_kept[r] = strtol(c, NULL, 10);
        line = strchr(line, '\n') + 1;
    }
    cr_assert_geq(n_kept[0], n_kept[1]);
    size_t left_out = 3 - kept[0] - kept[1];
    snprintf(cmd, sizeof cmd, "%s sweep --data %s --combos /tmp/sebt_test_combos.csv", SEBT_BINARY, DATA);
    cr_assert_eq(run(cmd), 0, "%s", errbuf);
    line = strchr(out, '\n') + 1;
    for (size_t r = 0; r < left_out; r++)
        line = strchr(line, '\n') + 1;
    const char *c = line;
    for (int col = 0; col < 16; col++)
        c = strchr(c, ',') + 1;
    cr_assert_leq(strtol(c, NULL, 10), n_kept[1]);
    char path[256];
    for (int r = 0; r < 2; r++) {
        snprintf(path, sizeof path, "/tmp/sebt_test_trades/combo_%zu.csv", kept[r]);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f, "%s missing", path);
        cr_assert_eq(count_lines(fgets(errbuf, sizeof errbuf, f) ? "x\n" : ""), 1);
        fclose(f);
    }
    snprintf(path, sizeof path, "/tmp/sebt_test_trades/combo_%zu.csv", left_out);
    cr_assert_null(fopen(path, "r"), "%s was not kept by --top 2", path);
    system("rm -rf /tmp/sebt_test_trades");
    unlink("/tmp/sebt_test_combos.csv");
}

Test(sweep_cli, errors_exit_2_with_line_and_parameter)
{
    write_file("/tmp/sebt_test_bad.txt", "vol_z = 1\n# note\nema_fast = 0\n");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s sweep --data %s --grid /tmp/sebt_test_bad.txt", SEBT_BINARY, DATA);
    cr_assert_eq(run(cmd), 2);
    cr_assert(strstr(errbuf, "_bad.txt:3") && strstr(errbuf, "ema_fast"), "%s", errbuf);
    snprintf(cmd, sizeof cmd, "%s sweep --data %s", SEBT_BINARY, DATA);
    cr_assert_eq(run(cmd), 2);
    cr_assert(strstr(errbuf, "--grid"), "%s", errbuf);
    snprintf(cmd, sizeof cmd, "%s sweep --data %s --grid /tmp/sebt_test_bad.txt --by sharpe", SEBT_BINARY, DATA);
    cr_assert_eq(run(cmd), 2);
    unlink("/tmp/sebt_test_bad.txt");
}

Test(sweep_cli, json_format)
{
    write_file("/tmp/sebt_test_grid2.txt", "max_hold = 10, 20\n");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s sweep --data %s --grid /tmp/sebt_test_grid2.txt --format json", SEBT_BINARY, DATA);
    cr_assert_eq(run(cmd), 0, "%s", errbuf);
    cr_assert(strstr(out, "\"backend\":\"fast_cpu\""), "%s", out);
    cr_assert(strstr(out, "\"combo\":1,"), "%s", out);
    cr_assert(strstr(out, "\"max_hold\":20"), "%s", out);
    unlink("/tmp/sebt_test_grid2.txt");
}
