/* The JSON reader and the Google Benchmark results built on it. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "json.h"
#include "report.h"

static sebt_error err;

static sebt_json *parse(const char *text)
{
    sebt_json *v = NULL;
    sebt_status st = sebt_json_parse("t.json", text, strlen(text), &v, &err);
    cr_assert_eq(st, SEBT_OK, "%s", err.msg);
    return v;
}

static void parse_fails(const char *text, const char *msg)
{
    sebt_json *v = NULL;
    cr_assert_neq(sebt_json_parse("t.json", text, strlen(text), &v, &err), SEBT_OK, "accepted: %s", text);
    cr_assert_null(v);
    cr_assert_str_eq(err.msg, msg);
}

Test(report_json, values_and_escapes)
{
    sebt_json *v = parse(" {\"arr\": [1, -2.5e3, true, false, null], \"s\": \"x\\\"\\n\\u00e9\\ud83d\\ude00\","
                         " \"a\": 1, \"a\": 7, \"gb\": [NaN, Infinity, -Infinity], \"t\": \"NaN\"} ");
    cr_assert_eq(v->type, SEBT_JSON_OBJECT);
    cr_assert_eq(sebt_json_get_number(v, "a", 0), 7, "a repeated key: the last one wins");
    const sebt_json *arr = sebt_json_get(v, "arr");
    cr_assert_eq(arr->n, 5);
    cr_assert_eq(arr->items[1].number, -2500.0);
    cr_assert(arr->items[2].boolean && !arr->items[3].boolean);
    cr_assert_eq(arr->items[4].type, SEBT_JSON_NULL);
    cr_assert_str_eq(sebt_json_get_string(v, "s", ""), "x\"\n\xc3\xa9\xf0\x9f\x98\x80");
    /* Google Benchmark's bare NaN and infinities are numbers; "NaN" quoted stays a string. */
    const sebt_json *gb = sebt_json_get(v, "gb");
    cr_assert(isnan(gb->items[0].number));
    cr_assert(isinf(gb->items[1].number) && gb->items[1].number > 0);
    cr_assert(isinf(gb->items[2].number) && gb->items[2].number < 0);
    cr_assert_str_eq(sebt_json_get_string(v, "t", ""), "NaN");
    cr_assert_eq(sebt_json_get_number(v, "missing", 42), 42);
    sebt_json_free(v);
}

/* jansson's words, at the line and column of the token as written (the
 * NaN and Infinity tokens, rewritten before jansson reads them, do not
 * shift what comes after). */
Test(report_json, errors_name_line_and_column)
{
    parse_fails("{\"a\": 1,\n  \"b\" 2}", "t.json:2:7: ':' expected near '2'");
    parse_fails("[1, 2", "t.json:1:6: ']' expected near end of file");
    parse_fails("[tru]", "t.json:1:2: invalid token near 'tru'");
    parse_fails("\"\\q\"", "t.json:1:1: invalid escape near '\"\\q'");
    parse_fails("\"\\ud800x\"", "t.json:1:1: invalid Unicode '\\uD800' near '\"\\ud800x\"'");
    parse_fails("{} {}", "t.json:1:4: end of file expected near '{'");
    parse_fails("", "t.json:1:1: unexpected token near end of file");
    parse_fails("\"a\\u0000b\"", "t.json:1:1: \\u0000 is not allowed in a string");
    parse_fails("[NaN, 1 x]", "t.json:1:9: ']' expected near 'x'");
    parse_fails("[Infinity,\n -Infinity, NaN, 2, @]", "t.json:2:21: invalid token near '@'");
    char deep[5000];
    memset(deep, '[', sizeof deep - 1);
    deep[sizeof deep - 1] = '\0';
    parse_fails(deep, "t.json:1:2049: maximum parsing depth reached near '['");
}

static const char *const two_repetitions =
    "{\"context\": {\"host_name\": \"h\", \"num_cpus\": 2, \"caches\": []},"
    " \"benchmarks\": ["
    "{\"name\": \"sweep_combos/fast_cpu/bars:100/combos:10/threads:2/real_time\", \"run_type\": \"iteration\","
    " \"iterations\": 3, \"real_time\": 2.0, \"time_unit\": \"ms\", \"combos_per_second\": 5000, \"label\": \"parity ok: x\"},"
    "{\"name\": \"sweep_combos/fast_cpu/bars:100/combos:10/threads:2/real_time\", \"run_type\": \"iteration\","
    " \"iterations\": 3, \"real_time\": 4.0, \"time_unit\": \"ms\", \"combos_per_second\": 2500},"
    "{\"name\": \"sweep_combos/fast_cpu/bars:100/combos:10/threads:2/real_time\", \"run_type\": \"iteration\","
    " \"iterations\": 3, \"real_time\": 3000.0, \"time_unit\": \"us\", \"combos_per_second\": 3333},"
    "{\"name\": \"sweep_combos/fast_cpu/bars:100/combos:10/threads:2/real_time_mean\", \"run_type\": \"aggregate\","
    " \"real_time\": 3.0, \"time_unit\": \"ms\"},"
    "{\"name\": \"sweep_bars/cuda/bars:1000/combos:8/threads:0\", \"error_occurred\": true,"
    " \"error_message\": \"parity failed: combo 3 diverges\", \"real_time\": 0, \"time_unit\": \"ms\","
    " \"combos_per_second\": 1e9}"
    "]}";

Test(report_json, google_benchmark_runs)
{
    sebt_bench_set set;
    cr_assert_eq(sebt_bench_parse("b.json", two_repetitions, strlen(two_repetitions), &set, &err), SEBT_OK,
                 "%s", err.msg);
    cr_assert_eq(set.n_runs, 2, "three repetitions become one run; the aggregate is dropped");
    const sebt_bench_run *r = sebt_bench_find(&set, "sweep_combos", "fast_cpu", 100, 10, 2);
    cr_assert_not_null(r);
    cr_assert_eq(r->status, SEBT_RUN_OK);
    cr_assert_float_eq(r->seconds, 3e-3, 1e-15, "the median of 2 ms, 4 ms and 3000 us");
    cr_assert_eq(r->combos_per_s, 3333);
    cr_assert(isnan(r->bars_per_s));
    cr_assert_str_eq(r->message, "parity ok: x");

    const sebt_bench_run *bad = sebt_bench_find(&set, "sweep_bars", "cuda", 1000, 8, -1);
    cr_assert_not_null(bad);
    cr_assert_eq(bad->status, SEBT_RUN_PARITY_FAILED);
    cr_assert(isnan(bad->combos_per_s), "a run that was not timed shows no speed");
    cr_assert(isnan(bad->seconds));

    cr_assert_str_eq(sebt_bench_context(&set, "host_name"), "h");
    cr_assert_str_eq(sebt_bench_context(&set, "num_cpus"), "2");
    cr_assert_null(sebt_bench_context(&set, "caches"));
    sebt_bench_set_free(&set);
}

Test(report_json, not_google_benchmark)
{
    sebt_bench_set set;
    const char *t = "{\"runs\": []}";
    cr_assert_eq(sebt_bench_parse("x.json", t, strlen(t), &set, &err), SEBT_ERR_INPUT);
    cr_assert(strstr(err.msg, "x.json: no \"benchmarks\" array"), "%s", err.msg);
    t = "{\"benchmarks\": [{\"name\": \"a/b\", \"real_time\": 1, \"time_unit\": \"fortnights\"}]}";
    cr_assert_eq(sebt_bench_parse("x.json", t, strlen(t), &set, &err), SEBT_ERR_INPUT);
    cr_assert(strstr(err.msg, "unknown time_unit 'fortnights'"), "%s", err.msg);
}
