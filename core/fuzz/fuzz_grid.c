/* libFuzzer harness: grid files (sebt_grid_parse, core/grid.c).
 * Invariants: an error has a message; a grid that parses has 1..limit
 * combos, each within its SPEC §2 rules; its parameters not named keep
 * their defaults in every combo; written as a combos CSV the combos read
 * back to the same bits (fuzz_common.h). */
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
    sebt_status st = sebt_grid_parse("fuzz.grid", (const char *)data, size, &c, &n, &e);
    if (st != SEBT_OK) {
        fuzz_check_error(st, &e);
        FUZZ_CHECK(c == NULL && n == 0, "a failed parse left combos");
        return 0;
    }
    FUZZ_CHECK(n <= 4096, "%zu combos past SEBT_MAX_COMBOS=4096", n);
    fuzz_check_combos(c, n);
    /* A parameter whose name is not in the text keeps its default. */
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
    free(c);
    return 0;
}
