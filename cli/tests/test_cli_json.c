/* The CLI's JSON writer (cli/output_json.c), which every subcommand
 * that emits JSON shares. It lives in the sebt executable, not a library,
 * so the test compiles it in. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "../output_json.c"

/* A JSON writer (j) into memory (text, once capture_end closes f). */
typedef struct {
    char *text;
    size_t len;
    FILE *f;
    cli_json j;
} capture;

static void capture_begin(capture *c, int wrap_depth)
{
    c->text = NULL;
    c->len = 0;
    c->f = open_memstream(&c->text, &c->len);
    cr_assert_not_null(c->f);
    cli_json_init(&c->j, c->f, wrap_depth);
}

static const char *capture_end(capture *c)
{
    fclose(c->f);
    return c->text;
}

Test(cli_json, flat_object_without_wrapping)
{
    capture c;
    capture_begin(&c, 0);
    cli_json *j = &c.j;
    cli_json_begin_object(j, NULL);
    cli_json_string(j, "s", "x");
    cli_json_int(j, "i", -42);
    cli_json_int(j, "big", INT64_C(1609459200000));
    cli_json_double(j, "d", 0.1);
    cli_json_bool(j, "t", true);
    cli_json_bool(j, "f", false);
    cli_json_null(j, "n");
    cli_json_begin_array(j, "a");
    cli_json_int(j, NULL, 1);
    cli_json_int(j, NULL, 2);
    cli_json_end_array(j);
    cli_json_begin_array(j, "empty");
    cli_json_end_array(j);
    cli_json_end_object(j);
    cli_json_finish(j);
    cr_assert_str_eq(capture_end(&c), "{\"s\":\"x\",\"i\":-42,\"big\":1609459200000,"
                                      "\"d\":0.1,\"t\":true,\"f\":false,"
                                      "\"n\":null,\"a\":[1,2],\"empty\":[]}\n");
    free(c.text);
}

Test(cli_json, non_finite_doubles_are_null)
{
    capture c;
    capture_begin(&c, 0);
    cli_json *j = &c.j;
    cli_json_begin_array(j, NULL);
    cli_json_double(j, NULL, NAN);
    cli_json_double(j, NULL, INFINITY);
    cli_json_double(j, NULL, -INFINITY);
    cli_json_double(j, NULL, -0.0);
    cli_json_double(j, NULL, 1e300);
    cli_json_end_array(j);
    cr_assert_str_eq(capture_end(&c), "[null,null,null,-0,1e+300]");
    free(c.text);
}

Test(cli_json, doubles_read_back_bit_exact)
{
    const double v[] = { 0.1, 1.0 / 3.0, 4201.0799999999999, 5e-324, 1.7976931348623157e308,
                         -2.2250738585072014e-308 };
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        capture c;
        capture_begin(&c, 0);
        cli_json *j = &c.j;
        cli_json_double(j, NULL, v[i]);
        double back = strtod(capture_end(&c), NULL);
        cr_assert(memcmp(&back, &v[i], sizeof back) == 0, "%s did not read back", c.text);
        free(c.text);
    }
}

Test(cli_json, strings_are_escaped)
{
    capture c;
    capture_begin(&c, 0);
    cli_json *j = &c.j;
    cli_json_begin_object(j, NULL);
    cli_json_string(j, "k\"ey", "a\"b\\c\nd\te\x01" "f");
    cli_json_string(j, "null", NULL);
    cli_json_end_object(j);
    cr_assert_str_eq(capture_end(&c), "{\"k\\\"ey\":\"a\\\"b\\\\c\\nd\\te\\u0001f\",\"null\":\"\"}");
    free(c.text);
}

Test(cli_json, wrap_depth_puts_elements_on_their_own_lines)
{
    capture c;
    capture_begin(&c, 2);
    cli_json *j = &c.j;
    cli_json_begin_object(j, NULL);
    cli_json_int(j, "bars", 8);
    cli_json_begin_array(j, "trades");
    cli_json_begin_object(j, NULL);
    cli_json_int(j, "a", 1);
    cli_json_int(j, "b", 2);
    cli_json_end_object(j);
    cli_json_begin_object(j, NULL);
    cli_json_int(j, "a", 3);
    cli_json_end_object(j);
    cli_json_end_array(j);
    cli_json_begin_array(j, "none");
    cli_json_end_array(j);
    cli_json_end_object(j);
    cli_json_finish(j);
    cr_assert_str_eq(capture_end(&c), "{\n"
                                      "  \"bars\":8,\n"
                                      "  \"trades\":[\n"
                                      "    {\"a\":1,\"b\":2},\n"
                                      "    {\"a\":3}\n"
                                      "  ],\n"
                                      "  \"none\":[]\n"
                                      "}\n");
    free(c.text);
}

Test(cli_json, params_in_spec_order_with_their_types)
{
    capture c;
    capture_begin(&c, 0);
    cli_json *j = &c.j;
    sebt_params p = sebt_params_default();
    p.use_tp = false;
    cli_json_params(j, NULL, &p);
    cr_assert_str_eq(capture_end(&c),
                     "{\"ema_fast\":96,\"ema_slow\":672,\"z_window\":672,\"atr_window\":96,"
                     "\"vol_z\":2,\"tr_z\":1.2,\"cloc_min\":0.6,\"use_stop\":true,"
                     "\"atr_stop_mult\":0.7,\"use_tp\":false,\"reward_r\":2,"
                     "\"use_time\":true,\"max_hold\":96,\"fee_bp\":5,\"slippage_bp\":5,"
                     "\"use_rsi\":false,\"rsi_window\":14,\"rsi_max\":30}");
    free(c.text);
}

Test(cli_json, metrics_fields)
{
    capture c;
    capture_begin(&c, 0);
    cli_json *j = &c.j;
    sebt_metrics m = { .n = 3, .win_rate = 0.5, .avg_r = -0.25, .total_pnl = 12, .max_dd = -4, .sharpe = 0 };
    cli_json_metrics(j, NULL, &m);
    cr_assert_str_eq(capture_end(&c), "{\"n\":3,\"win_rate\":0.5,\"avg_r\":-0.25,\"total_pnl\":12,"
                                      "\"max_dd\":-4,\"sharpe\":0}");
    free(c.text);
}
