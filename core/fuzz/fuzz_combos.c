/* libFuzzer harness: combos CSV files (sebt_combos_parse, core/grid.c).
 * Invariants: an error has a message; a file that parses has 1..limit
 * combos within their SPEC §2 rules, no more than it has lines, and
 * written back as a combos CSV they read to the same bits. */
#include "fuzz_common.h"
#include "sebt/grid.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("SEBT_MAX_COMBOS", "4096", 1);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error e = { 0 };
    sebt_status st = sebt_combos_parse("fuzz.csv", (const char *)data, size, &c, &n, &e);
    if (st != SEBT_OK) {
        fuzz_check_error(st, &e);
        FUZZ_CHECK(c == NULL && n == 0, "a failed parse left combos");
        return 0;
    }
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    FUZZ_CHECK(n < lines, "%zu combos from %zu lines (one is the header)", n, lines);
    FUZZ_CHECK(n <= 4096, "%zu combos past SEBT_MAX_COMBOS=4096", n);
    fuzz_check_combos(c, n);
    free(c);
    return 0;
}
