/* The one libFuzzer harness of the two parsers that make combos (grid
 * files, combos CSV files), included by fuzz_grid.c and fuzz_combos.c after
 * they define:
 *   FUZZ_COMBOS_PARSE  the parser (sebt_grid_parse or sebt_combos_parse)
 *   FUZZ_COMBOS_NAME   the file name its messages carry
 *   fuzz_combos_more   their own invariant of what parsed:
 *                      static void fuzz_combos_more(const uint8_t *data, size_t size,
 *                                                   const sebt_params *c, size_t n);
 * Shared invariants: an error has a message and leaves nothing allocated;
 * what parses is 1..FUZZ_MAX_COMBOS combos, each within its SPEC §2 rules,
 * and written as a combos CSV reads back to the same bits
 * (fuzz_check_combos). */
#ifndef SEBT_FUZZ_COMBOS_HARNESS_H
#define SEBT_FUZZ_COMBOS_HARNESS_H

#include "fuzz_common.h"

/* Small, to keep each input fast; set before the first parse. */
#define FUZZ_MAX_COMBOS 4096

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
    sebt_status st = FUZZ_COMBOS_PARSE(FUZZ_COMBOS_NAME, (const char *)data, size, &c, &n, &e);
    if (st != SEBT_OK) {
        fuzz_check_error(st, &e);
        FUZZ_CHECK(c == NULL && n == 0, "a failed parse left combos");
        return 0;
    }
    FUZZ_CHECK(n <= FUZZ_MAX_COMBOS, "%zu combos past SEBT_MAX_COMBOS=4096", n);
    fuzz_check_combos(c, n);
    fuzz_combos_more(data, size, c, n);
    free(c);
    return 0;
}

#endif
