/* libFuzzer harness: --where conditions (sebt_where_compile, core/where.c).
 * Invariants: an error has a message and leaves nothing compiled; a
 * condition that compiles keeps its text and evaluates on rows of ordinary
 * values, NaN and infinities under ASan and UBSan. */
#include "fuzz_common.h"
#include "sebt/where.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const cols[] = { "n", "sharpe", "max_dd", "use_stop", "vol_z", "combo" };
    static const bool is_bool[] = { false, false, false, true, false, false };
    char text[SEBT_WHERE_MAX_TEXT + 8];
    size_t len = size < sizeof text - 1 ? size : sizeof text - 1;
    memcpy(text, data, len);
    text[len] = '\0';
    sebt_where *w = NULL;
    sebt_error e = { 0 };
    sebt_status st = sebt_where_compile(text, cols, is_bool, 6, &w, &e);
    if (st != SEBT_OK) {
        fuzz_check_error(st, &e);
        FUZZ_CHECK(w == NULL, "a failed compile left a condition");
        return 0;
    }
    const double rows[][6] = { { 0, 0, 0, 0, 0, 0 }, { 30, 1.5, -0.2, 1, 2, 7 },
                               { -1, NAN, -INFINITY, 0, INFINITY, 1e300 } };
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
        (void)sebt_where_eval(w, rows[r]);
    FUZZ_CHECK(strcmp(sebt_where_text(w), text) == 0, "the condition's text changed");
    sebt_where_free(w);
    return 0;
}
