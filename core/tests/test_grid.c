/* Grid files and combos CSV (include/sebt/grid.h): values, order, defaults
 * and errors that name file:line and the parameter. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sebt/grid.h"
#include "sebt/sebt.h"

static sebt_status grid(const char *text, sebt_params **out, size_t *n, sebt_error *err)
{
    return sebt_grid_parse("g.txt", text, strlen(text), out, n, err);
}

static sebt_status combos(const char *text, sebt_params **out, size_t *n, sebt_error *err)
{
    return sebt_combos_parse("c.csv", text, strlen(text), out, n, err);
}

Test(grid, list_and_range_first_parameter_slowest)
{
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error err = { 0 };
    cr_assert_eq(grid("# a comment\n\nvol_z = 1.5, 2.0 # trailing\nema_fast = 24:72:24\n", &c, &n, &err),
                 SEBT_OK, "%s", err.msg);
    cr_assert_eq(n, 6);
    /* vol_z slowest, ema_fast fastest. */
    double vz[] = { 1.5, 1.5, 1.5, 2.0, 2.0, 2.0 };
    int32_t ef[] = { 24, 48, 72, 24, 48, 72 };
    for (size_t i = 0; i < 6; i++) {
        cr_assert_eq(c[i].vol_z, vz[i], "combo %zu", i);
        cr_assert_eq(c[i].ema_fast, ef[i], "combo %zu", i);
        /* Unnamed parameters keep their defaults. */
        cr_assert_eq(c[i].ema_slow, 672);
        cr_assert_eq(c[i].tr_z, 1.2);
        cr_assert(c[i].use_stop);
    }
    free(c);
}

Test(grid, range_stop_included_only_when_it_lands)
{
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error err = { 0 };
    cr_assert_eq(grid("max_hold = 10:35:10\n", &c, &n, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(n, 3);    /* 10, 20, 30: 35 is not on the step */
    cr_assert_eq(c[2].max_hold, 30);
    free(c);
    /* Decimal steps read as written: 0.1:0.3:0.1 is 0.1, 0.2, 0.3 exactly. */
    cr_assert_eq(grid("cloc_min = 0.1:0.3:0.1\n", &c, &n, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(n, 3);
    cr_assert_eq(c[0].cloc_min, 0.1);
    cr_assert_eq(c[1].cloc_min, 0.2);
    cr_assert_eq(c[2].cloc_min, 0.3);
    free(c);
    cr_assert_eq(grid("use_stop = true, false\nfee_bp = 0\n", &c, &n, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(n, 2);
    cr_assert(c[0].use_stop);
    cr_assert(!c[1].use_stop);
    cr_assert_eq(c[1].fee_bp, 0.0);
    free(c);
}

static void expect_error(const char *text, sebt_status code, const char *const *needles)
{
    sebt_params *c = (sebt_params *)1;
    size_t n = 99;
    sebt_error err = { 0 };
    cr_assert_eq(grid(text, &c, &n, &err), code, "'%s': %s", text, err.msg);
    cr_assert_null(c);
    cr_assert_eq(n, 0);
    for (size_t i = 0; needles[i]; i++)
        cr_assert(strstr(err.msg, needles[i]), "'%s': message '%s' lacks '%s'", text, err.msg, needles[i]);
}

Test(grid, errors_name_line_and_parameter)
{
    expect_error("vol_z = 1\nema_fast = 0, 24\n", SEBT_ERR_PARAM,
                 (const char *[]){ "g.txt:2", "ema_fast", "0", NULL });
    expect_error("\n\nbogus = 1\n", SEBT_ERR_PARAM, (const char *[]){ "g.txt:3", "bogus", NULL });
    expect_error("vol_z = 1, abc\n", SEBT_ERR_PARAM, (const char *[]){ "g.txt:1", "vol_z", "abc", NULL });
    expect_error("vol_z = 1\nvol_z = 2\n", SEBT_ERR_INPUT, (const char *[]){ "g.txt:2", "vol_z", "line 1", NULL });
    expect_error("ema_fast = 10:20:0\n", SEBT_ERR_INPUT, (const char *[]){ "g.txt:1", "ema_fast", "step", NULL });
    expect_error("ema_fast = 20:10:5\n", SEBT_ERR_INPUT, (const char *[]){ "g.txt:1", "ema_fast", NULL });
    expect_error("ema_fast = 10:20:2.5\n", SEBT_ERR_INPUT, (const char *[]){ "g.txt:1", "whole", NULL });
    expect_error("use_tp = 0:1:1\n", SEBT_ERR_INPUT, (const char *[]){ "g.txt:1", "use_tp", NULL });
    expect_error("vol_z 1.5\n", SEBT_ERR_INPUT, (const char *[]){ "g.txt:1", "name = values", NULL });
    expect_error("reward_r = 1, , 2\n", SEBT_ERR_INPUT, (const char *[]){ "g.txt:1", "reward_r", "empty", NULL });
    expect_error("z_window = 1:10:1\n", SEBT_ERR_PARAM, (const char *[]){ "g.txt:1", "z_window", NULL });
    /* 10^4 * 10^4 = 10^8 combos: refused before anything is allocated. */
    expect_error("ema_fast = 1:10000:1\nema_slow = 1:10000:1\n", SEBT_ERR_INPUT,
                 (const char *[]){ "g.txt:2:", "ema_slow", "100000000 combos", "more than", NULL });
}

/* A decimal comma is refused, not read as two values (docs/cli.md, "Grid
 * files"); lists whose commas cannot be decimal ones are read as before. */
Test(grid, a_decimal_comma_is_refused_with_the_reason)
{
    expect_error("ema_fast = 24\nvol_z = 1.5, 2,0\n", SEBT_ERR_INPUT,
                 (const char *[]){ "g.txt:2: parameter vol_z: '2,0' looks like a number written with a decimal comma",
                                   "write 2.0 for one value, or '2, 0'", NULL });
    expect_error("vol_z = 1,5\n", SEBT_ERR_INPUT, (const char *[]){ "g.txt:1", "'1,5'", "write 1.5", NULL });
    expect_error("fee_bp = 0,25, 5\n", SEBT_ERR_INPUT, (const char *[]){ "g.txt:1", "'0,25'", "0.25", NULL });
    struct { const char *text; size_t n; double last; } ok[] = {
        { "vol_z = 1.5,2.0,2.5\n", 3, 2.5 },  /* tight commas beside points: separators */
        { "vol_z = 1.5, 2, 0.5\n", 3, 0.5 },
        { "vol_z = 2, 3\n", 2, 3 },
        { "vol_z = 1e0,2\n", 2, 2 },
        { "ema_fast = 24,48,96\n", 3, 96 },  /* whole numbers of bars: no decimals to mistake */
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        sebt_params *c = NULL;
        size_t n = 0;
        sebt_error err = { 0 };
        cr_assert_eq(grid(ok[i].text, &c, &n, &err), SEBT_OK, "%s: %s", ok[i].text, err.msg);
        cr_assert_eq(n, ok[i].n, "%s", ok[i].text);
        double last = strncmp(ok[i].text, "ema_fast", 8) == 0 ? c[n - 1].ema_fast : c[n - 1].vol_z;
        cr_assert_eq(last, ok[i].last, "%s", ok[i].text);
        free(c);
    }
}

/* A mistyped parameter name gets the nearest one. */
Test(grid, a_mistyped_parameter_gets_did_you_mean)
{
    expect_error("vol_zz = 1.5\n", SEBT_ERR_PARAM,
                 (const char *[]){ "g.txt:1", "unknown parameter 'vol_zz': did you mean vol_z?", NULL });
}

Test(combos, header_subset_and_rows_in_order)
{
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error err = { 0 };
    cr_assert_eq(combos("vol_z, max_hold,use_tp\r\n1.5,10,false\r\n# skipped\n\n2.5,20,true\n", &c, &n, &err),
                 SEBT_OK, "%s", err.msg);
    cr_assert_eq(n, 2);
    cr_assert_eq(c[0].vol_z, 1.5);
    cr_assert_eq(c[0].max_hold, 10);
    cr_assert(!c[0].use_tp);
    cr_assert_eq(c[1].vol_z, 2.5);
    cr_assert_eq(c[1].max_hold, 20);
    cr_assert(c[1].use_tp);
    cr_assert_eq(c[1].ema_fast, 96);
    free(c);
}

Test(combos, errors_name_line_column_and_parameter)
{
    struct { const char *text; sebt_status code; const char *a, *b; } cases[] = {
        { "vol_z,ema_fast\n1,24\n2,0\n", SEBT_ERR_PARAM, "c.csv:3", "ema_fast" },
        { "vol_z,nope\n1,2\n", SEBT_ERR_PARAM, "c.csv:1", "nope" },
        { "vol_z,vol_z\n1,2\n", SEBT_ERR_INPUT, "c.csv:1", "repeats" },
        { "vol_z,tr_z\n1\n", SEBT_ERR_INPUT, "c.csv:2", "1 fields" },
        { "vol_z\nx\n", SEBT_ERR_PARAM, "c.csv:2", "vol_z" },
        { "vol_z\n", SEBT_ERR_INPUT, "c.csv", "no combos" },
        { "", SEBT_ERR_INPUT, "c.csv", "header" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sebt_params *c = NULL;
        size_t n = 0;
        sebt_error err = { 0 };
        cr_assert_eq(combos(cases[i].text, &c, &n, &err), cases[i].code, "case %zu: %s", i, err.msg);
        cr_assert(strstr(err.msg, cases[i].a) && strstr(err.msg, cases[i].b), "case %zu: '%s'", i, err.msg);
        cr_assert_null(c);
    }
}

Test(grid, missing_file_is_an_io_error)
{
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error err = { 0 };
    cr_assert_eq(sebt_grid_load("/nonexistent/grid.txt", &c, &n, &err), SEBT_ERR_IO);
    cr_assert(strstr(err.msg, "/nonexistent/grid.txt"), "%s", err.msg);
}

/* Found by the libFuzzer harness fuzz_combos: a bad value in the row that
 * arrives when the combo buffer is exactly full (64 rows) was still stored,
 * one past the end. It must be an error naming that row, nothing written. */
Test(combos, bad_value_when_the_buffer_is_full_is_an_error_not_an_overflow)
{
    char text[4096];
    size_t len = (size_t)snprintf(text, sizeof text, "ema_fast\n");
    for (int i = 0; i < 64; i++)
        len += (size_t)snprintf(text + len, sizeof text - len, "%d\n", i + 1);
    snprintf(text + len, sizeof text - len, "zero\n");
    sebt_params *c = NULL;
    size_t n = 0;
    sebt_error e = { 0 };
    cr_assert_neq(combos(text, &c, &n, &e), SEBT_OK);
    cr_assert_not_null(strstr(e.msg, "c.csv:66"), "%s", e.msg);
    cr_assert_null(c);
}

/* A streamed grid's windows (sebt_grid_combos counts each combo's digits
 * up from the first) are the held grid's combos, wherever a window starts
 * and however long it is: across a wrap of the fastest axis, of several at
 * once, and of the slowest. The expected combos are sebt_grid_parse's,
 * which makes each one from its index alone. */
Test(grid, streamed_windows_are_the_held_combos)
{
    const char *text = "vol_z = 1.5, 2.0, 2.5\nuse_stop = true, false\nema_fast = 24:72:24\ntr_z = 0.9:1.3:0.2\n";
    char path[] = "/tmp/sebt_grid_XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    sebt_params *held = NULL;
    size_t n = 0, n_streamed = 0;
    sebt_error err = { 0 };
    cr_assert_eq(grid(text, &held, &n, &err), SEBT_OK, "%s", err.msg);
    cr_assert_eq(n, 3 * 2 * 3 * 3);
    sebt_grid *g = NULL;
    cr_assert_eq(sebt_grid_open(path, &g, &n_streamed, &err), SEBT_OK, "%s", err.msg);
    unlink(path);
    cr_assert_eq(n_streamed, n);
    sebt_params win[54];
    for (size_t first = 0; first < n; first++)
        for (size_t len = 1; first + len <= n; len++) {
            memset(win, 0xa5, sizeof win);
            sebt_grid_combos(g, first, len, win);
            for (size_t k = 0; k < len; k++)
                for (int i = 0; i < SEBT_N_PARAMS; i++)
                    cr_assert_eq(sebt_params_get_double(&win[k], i), sebt_params_get_double(&held[first + k], i),
                                 "window at %zu of %zu: combo %zu, %s", first, len, first + k,
                                 sebt_param_table[i].name);
        }
    sebt_grid_close(g);
    free(held);
}
