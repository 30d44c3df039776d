/* `sebt fuzz` and `sebt parity` as a user runs them: exit codes, and
 * output that names what it found. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static int run(const char *args, char *out, size_t size)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>&1", SEBT_BINARY, args);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t n = fread(out, 1, size - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char out[1 << 16];

Test(cli_oracle, self_test_catches_every_mutant, .timeout = 300)
{
    cr_expect_eq(run("fuzz --self-test --time 30 --no-save", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "mutant:overlap") != NULL, "%s", out);
    cr_expect(strstr(out, "every mutant caught") != NULL, "%s", out);
}

Test(cli_oracle, a_mutant_fails_fuzz_with_a_readable_reproducer)
{
    cr_expect_eq(run("fuzz --backend mutant:tp_first --iterations 500 --no-save", out, sizeof out), 1, "%s", out);
    cr_expect(strstr(out, "DIVERGENCE") != NULL, "%s", out);
    cr_expect(strstr(out, "differs at bar") != NULL, "%s", out);
    cr_expect(strstr(out, "reproducer (") != NULL, "%s", out);
}

Test(cli_oracle, fuzz_json_says_what_it_found)
{
    cr_expect_eq(run("fuzz --backend mutant:overlap --iterations 500 --no-save --format json", out, sizeof out),
                 1, "%s", out);
    cr_expect(strstr(out, "\"found\":true") != NULL, "%s", out);
    cr_expect(strstr(out, "\"divergence\":{") != NULL, "%s", out);
    cr_expect_eq(run("fuzz --backend reference --iterations 50 --no-save --format json", out, sizeof out), 0,
                 "%s", out);
    cr_expect(strstr(out, "\"found\":false") != NULL, "%s", out);
}

Test(cli_oracle, bad_usage_exits_2)
{
    cr_expect_eq(run("fuzz", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("fuzz --backend nosuch --iterations 5", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("fuzz --backend mutant:nosuch --iterations 5", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "mutant:overlap") != NULL, "the message lists the mutants: %s", out);
    cr_expect_eq(run("fuzz --backend reference --iterations 5 --time 3", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("fuzz --backend reference --seed -1", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("parity", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("parity --data x.csv --backend reference", out, sizeof out), 2, "%s", out);
}

Test(cli_oracle, fuzz_help_lists_the_mutants)
{
    cr_expect_eq(run("fuzz --help", out, sizeof out), 0);
    cr_expect(strstr(out, "mutant:warmup") != NULL, "%s", out);
    cr_expect(strstr(out, "mutant:max_hold") != NULL, "%s", out);
}

#define DATA SEBT_FIXTURES_DIR "/data/BTCUSDT-1m-2019-01.csv.gz"
/* ctest runs from oracle/tests; the path goes through the source tree. */
#define COMBOS SEBT_FIXTURES_DIR "/../oracle/tests/parity-small.csv"

Test(cli_oracle, parity_passes_for_the_reference_and_fails_readably_for_a_mutant, .timeout = 120)
{
    cr_expect_eq(run("parity --data " DATA " --combos " COMBOS " --backend reference", out, sizeof out), 0,
                 "%s", out);
    cr_expect(strstr(out, "combos checked 3") != NULL, "%s", out);
    cr_expect(strstr(out, "result: pass") != NULL, "%s", out);
    cr_expect_eq(run("parity --data " DATA " --combos " COMBOS " --backend mutant:entry_exit", out, sizeof out),
                 1, "%s", out);
    cr_expect(strstr(out, "differs at bar") != NULL, "%s", out);
    cr_expect(strstr(out, "result: FAIL") != NULL, "%s", out);
    cr_expect_eq(run("parity --data " DATA " --combos " COMBOS " --backend mutant:max_hold --format json", out,
                     sizeof out), 1, "%s", out);
    cr_expect(strstr(out, "\"pass\":false") != NULL, "%s", out);
    cr_expect(strstr(out, "\"what\":\"exit\"") != NULL, "%s", out);
}

Test(cli_oracle, parity_passes_for_fast_cpu, .timeout = 120)
{
    cr_expect_eq(run("parity --data " DATA " --combos " COMBOS " --backend fast_cpu --threads 2", out, sizeof out),
                 0, "%s", out);
}
