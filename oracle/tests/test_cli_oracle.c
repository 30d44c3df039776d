/* `sebt fuzz` and `sebt parity` as a user runs them: exit codes, and
 * output that names what it found. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "sebt/oracle.h"

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

/* A number the self-test's JSON gives for one mutant: FIELD's value in
 * the object that names MUTANT, before the next mutant's; -1 when absent. */
static long long mutant_field(const char *json, const char *mutant, const char *field)
{
    char key[96];
    snprintf(key, sizeof key, "\"mutant\":\"%s\"", mutant);
    const char *at = strstr(json, key);
    if (!at)
        return -1;
    const char *next = strstr(at + 1, "\"mutant\":\"");
    snprintf(key, sizeof key, "\"%s\":", field);
    const char *f = strstr(at, key);
    if (!f || (next && f > next))
        return -1;
    return strtoll(f + strlen(key), NULL, 10);
}

static bool batch_bug(const char *name)
{
    static const char *const batch_bugs[] = { "mutant:batch_restart", "mutant:shared_slow", "mutant:stamp_wrap",
                                              "mutant:split_skip", "mutant:tail_drop" };
    for (size_t k = 0; k < sizeof batch_bugs / sizeof batch_bugs[0]; k++)
        if (strcmp(name, batch_bugs[k]) == 0)
            return true;
    return false;
}

/* The mutation self-test: every mutant caught by the fuzzer and by parity
 * on the bundled data, the score in the JSON. Bounded by cases, not time,
 * so a loaded or sanitized machine gets the same verdict: seed 5 reaches
 * every mutant within 1,000 small cases or its first big one. Its fuzz is
 * the library's (seed 5, 1,000 cases, a big one after 500, shrinking), so
 * the reproducers' sizes are held here, once: one combo and at most 50
 * bars (600 where the bug needs more, far_hole a big case past bar
 * 100,000), a batch bug its batch (test_fuzz's batch_mutants_keep_their_batch
 * holds their budget and the combo alone). */
Test(cli_oracle, self_test_catches_every_mutant, .timeout = 900)
{
    static char big[1 << 18];
    cr_expect_eq(run("fuzz --self-test --seed 5 --iterations 1000 --no-save --format json", big, sizeof big), 0, "%s", big);
    cr_assert_geq(sebt_mutant_count(), 25);
    for (size_t i = 0; i < sebt_mutant_count(); i++) {
        const char *name = sebt_mutant_at(i)->name;
        long long bars = mutant_field(big, name, "reproducer_bars");
        long long combos = mutant_field(big, name, "reproducer_combos");
        if (strcmp(name, "mutant:far_hole") == 0) {
            char kind[96];
            snprintf(kind, sizeof kind, "\"mutant\":\"%s\"", name);
            const char *obj = strstr(big, kind);
            cr_expect(obj && strstr(obj, "\"case_kind\":\"big\"") != NULL, "%s: not by a big case", name);
            cr_expect_geq(mutant_field(big, name, "bar"), 100000, "%s: found before bar 100,000", name);
        } else {
            cr_expect(bars >= 1 && bars <= (sebt_mutant_needs(i) ? 600 : 50), "%s: reproducer of %lld bars", name,
                      bars);
        }
        if (strcmp(name, "mutant:stamp_wrap") == 0)
            cr_expect_geq(combos, 257, "an 8-bit stamp wraps at 257 combos");
        else if (batch_bug(name))
            cr_expect_geq(combos, 2, "%s: a batch bug keeps its batch", name);
        else
            cr_expect_eq(combos, 1, "%s: one combo shows it", name);
    }
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
