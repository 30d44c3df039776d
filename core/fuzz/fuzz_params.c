/* libFuzzer harness: the parameter parser (sebt_params_set and
 * sebt_params_validate, core/params.c), one NAME=VALUE per line as --set
 * takes them.
 * Invariants: an unknown name or a malformed value is an error with a
 * message, and leaves the parameters as they were; a value that parses,
 * formatted with sebt_params_format, parses back to the same bits and
 * formats to the same text; only the named field changes; validate either
 * passes or names a parameter. */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    FUZZ_CHECK(text != NULL, "malloc");
    memcpy(text, data, size);
    text[size] = '\0';
    sebt_params p = sebt_params_default();
    char *line = text;
    /* Lines end at \n; a NUL ends the text, as it ends a C string (what
     * --set receives from argv). */
    while (line && *line) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char *eq = strchr(line, '=');
        if (eq) {
            *eq = '\0';
            const char *name = line, *value = eq + 1;
            sebt_params before = p;
            sebt_error e = { 0 };
            sebt_status st = sebt_params_set(&p, name, value, &e);
            int idx = sebt_param_index(name);
            if (st != SEBT_OK) {
                fuzz_check_error(st, &e);
                FUZZ_CHECK(fuzz_same_params(&before, &p), "a failed set of '%s' changed the parameters", name);
            } else {
                FUZZ_CHECK(idx >= 0, "set accepted the unknown name '%s'", name);
                for (int i = 0; i < SEBT_N_PARAMS; i++)
                    FUZZ_CHECK(i == idx || fuzz_same_double(sebt_params_get_double(&before, i),
                                                            sebt_params_get_double(&p, i)),
                               "setting %s changed %s", name, sebt_param_table[i].name);
                char f1[64], f2[64];
                sebt_params_format(&p, idx, f1, sizeof f1);
                sebt_params q = sebt_params_default();
                st = sebt_params_set(&q, name, f1, &e);
                FUZZ_CHECK(st == SEBT_OK, "%s='%s' (formatted from '%s') does not parse: %s", name, f1, value, e.msg);
                FUZZ_CHECK(fuzz_same_double(sebt_params_get_double(&p, idx), sebt_params_get_double(&q, idx)),
                           "%s: '%s' -> '%s' does not read back to the same bits", name, value, f1);
                sebt_params_format(&q, idx, f2, sizeof f2);
                FUZZ_CHECK(strcmp(f1, f2) == 0, "%s formats as '%s', then '%s'", name, f1, f2);
            }
            e = (sebt_error){ 0 };
            st = sebt_params_validate(&p, &e);
            if (st != SEBT_OK) {
                fuzz_check_error(st, &e);
                FUZZ_CHECK(strncmp(e.msg, "parameter ", 10) == 0, "validate does not name a parameter: %s", e.msg);
                /* Go on from the valid parameters before (a run with these
                 * would never start). */
                p = before;
                FUZZ_CHECK(sebt_params_validate(&p, &e) == SEBT_OK, "the parameters before were invalid: %s", e.msg);
            }
        }
        line = nl ? nl + 1 : NULL;
    }
    free(text);
    return 0;
}
