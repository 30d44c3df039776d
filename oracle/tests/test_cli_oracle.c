/* `sebt fuzz` and `sebt parity` as a user runs them: exit codes, and
 * output that names what it found. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#ifdef __SANITIZE_ADDRESS__
/* Criterion's runner (not sebt) leaks 48 bytes when several long tests run
 * in its parallel workers; LeakSanitizer ignores what the runner allocates
 * and still reports every allocation sebt makes. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) { return "leak:libcriterion.so\n"; }
#endif


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

/* The mutation self-test: every mutant caught by the fuzzer and by parity
 * on the bundled data, the score in the JSON. Bounded by cases, not time,
 * so a loaded or sanitized machine gets the same verdict: seed 5 reaches
 * every mutant within 1,000 small cases or its first big one. */
Test(cli_oracle, self_test_catches_every_mutant, .timeout = 900)
{
    static char big[1 << 18];
    cr_expect_eq(run("fuzz --self-test --seed 5 --iterations 1000 --no-save --format json", big, sizeof big), 0, "%s", big);
    cr_expect(strstr(big, "\"mutant\":\"mutant:overlap\"") != NULL, "%s", big);
    cr_expect(strstr(big, "\"mutant\":\"mutant:batch_restart\"") != NULL, "%s", big);
    cr_expect(strstr(big, "\"all_caught\":true") != NULL, "%s", big);
    cr_expect(strstr(big, "\"mutation_score\":{") != NULL, "%s", big);
    /* 24 engine mutants (z_stale, far_hole and rsi_off among them) and 4
     * sweep-engine ones; parity (hand-picked and grid-shaped combos) cannot
     * show stamp_wrap (257 combos) or tail_drop (a partial tail batch):
     * sebt_mutant_parity_blind. */
    cr_expect(strstr(big, "\"mutant\":\"mutant:shared_slow\"") != NULL, "%s", big);
    cr_expect(strstr(big, "\"mutant\":\"mutant:z_stale\"") != NULL, "%s", big);
    cr_expect(strstr(big, "\"mutant\":\"mutant:far_hole\"") != NULL, "%s", big);
    cr_expect(strstr(big, "\"mutant\":\"mutant:rsi_off\"") != NULL, "%s", big);
    cr_expect(strstr(big, "\"total\":28") != NULL, "%s", big);
    cr_expect(strstr(big, "\"fuzz\":28") != NULL, "%s", big);
    cr_expect(strstr(big, "\"parity\":26") != NULL, "%s", big);
    /* ...so those two are not run through it (minutes of the reference's walk). */
    cr_expect(strstr(big, "\"parity_divergence\":\"not run: the parity set has fewer than 257 combos\"") != NULL,
              "%s", big);
    cr_expect(strstr(big, "\"parity_divergence\":\"not run: parity's budgets") != NULL, "%s", big);
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
#define COMBOS_SLIPS SEBT_FIXTURES_DIR "/../oracle/parity-combos.csv"

Test(cli_oracle, parity_passes_for_the_reference_and_fails_readably_for_a_mutant, .timeout = 120)
{
    cr_expect_eq(run("parity --data " DATA " --combos " COMBOS " --backend reference", out, sizeof out), 0,
                 "%s", out);
    cr_expect(strstr(out, "combos checked 6") != NULL, "each file as loaded and gap-filled: %s", out);
    cr_expect(strstr(out, "as loaded") != NULL && strstr(out, "gap-filled") != NULL, "%s", out);
    cr_expect(strstr(out, "per 10^6 decisions") != NULL, "%s", out);
    cr_expect(strstr(out, "result: pass") != NULL, "%s", out);
    cr_expect_eq(run("parity --data " DATA " --combos " COMBOS " --backend mutant:entry_exit", out, sizeof out),
                 1, "%s", out);
    cr_expect(strstr(out, "differs at bar") != NULL, "%s", out);
    cr_expect(strstr(out, "result: FAIL") != NULL, "%s", out);
    cr_expect_eq(run("parity --data " DATA " --combos " COMBOS " --backend mutant:max_hold --format json", out,
                     sizeof out), 1, "%s", out);
    cr_expect(strstr(out, "\"pass\":false") != NULL, "%s", out);
    cr_expect(strstr(out, "\"what\":\"exit\"") != NULL, "%s", out);
    cr_expect(strstr(out, "\"ties_per_million\":") != NULL, "%s", out);
}

/* A strict/non-strict slip fails parity although the mutants declare a
 * tolerant contract: equal operands are never a tie. */
Test(cli_oracle, a_comparison_slip_fails_parity_despite_a_tolerant_contract, .timeout = 300)
{
    cr_expect_eq(run("parity --data " DATA " --combos " COMBOS_SLIPS " --backend mutant:stop_lt --gaps plain",
                     out, sizeof out), 1, "%s", out);
    cr_expect(strstr(out, "logic error") != NULL, "%s", out);
    cr_expect(strstr(out, "ties adjudicated 0") != NULL, "%s", out);
    cr_expect(strstr(out, "result: FAIL") != NULL, "%s", out);
}

Test(cli_oracle, parity_usage_errors_exit_2)
{
    cr_expect_eq(run("parity --backend reference --gaps sometimes", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("parity --backend reference --gaps plain", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("parity --backend reference --max-tie-rate -1", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("parity --backend reference --data x --grid a --combos b", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("fuzz --backend reference --big-share 2", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("fuzz --backend reference --no-parity", out, sizeof out), 2, "%s", out);
}

Test(cli_oracle, parity_passes_for_fast_cpu, .timeout = 120)
{
    cr_expect_eq(run("parity --data " DATA " --combos " COMBOS " --backend fast_cpu --threads 2", out, sizeof out),
                 0, "%s", out);
    cr_expect_eq(run("parity --data " DATA " --combos " COMBOS " --backend fast_cpu --threads 2 --memory-budget 1",
                     out, sizeof out), 0, "%s", out);
}
