/* libFuzzer harness: combos CSV files (sebt_combos_parse, core/grid.c).
 * Invariants: an error has a message; a file that parses has 1..limit
 * combos within their SPEC §2 rules, no more than it has lines, and
 * written back as a combos CSV they read to the same bits. */
#include "fuzz_common.h"
#include "sebt/grid.h"

/* No more combos than rows: one line is the header. */
static void fuzz_combos_more(const uint8_t *data, size_t size, const sebt_params *c, size_t n)
{
    (void)c;
    size_t lines = 1;
    for (size_t i = 0; i < size; i++)
        lines += data[i] == '\n';
    FUZZ_CHECK(n < lines, "%zu combos from %zu lines (one is the header)", n, lines);
}

#define FUZZ_COMBOS_PARSE sebt_combos_parse
#define FUZZ_COMBOS_NAME "fuzz.csv"
#include "fuzz_combos_harness.h"
