/* libFuzzer harness: grid files (sebt_grid_parse, core/grid.c).
 * Invariants: an error has a message; a grid that parses has 1..limit
 * combos, each within its SPEC §2 rules; its parameters not named keep
 * their defaults in every combo; written as a combos CSV the combos read
 * back to the same bits (fuzz_common.h). */
#include "fuzz_common.h"
#include "sebt/grid.h"

/* A parameter whose name is not in the text keeps its default. */
static void fuzz_combos_more(const uint8_t *data, size_t size, const sebt_params *c, size_t n)
{
    sebt_params d = sebt_params_default();
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        const char *name = sebt_param_table[i].name;
        size_t nl = strlen(name);
        int named = 0;
        for (size_t k = 0; k + nl <= size && !named; k++)
            named = memcmp(data + k, name, nl) == 0;
        if (named)
            continue;
        for (size_t k = 0; k < n; k++)
            FUZZ_CHECK(fuzz_same_double(sebt_params_get_double(&c[k], i), sebt_params_get_double(&d, i)),
                       "combo %zu: %s is not its default, yet the grid never names it", k, name);
    }
}

#define FUZZ_COMBOS_PARSE sebt_grid_parse
#define FUZZ_COMBOS_NAME "fuzz.grid"
#include "fuzz_combos_harness.h"
