/* Parameters (core/params.c): SPEC §2 defaults and rules, parsing by name,
 * formatting. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "sebt/sebt.h"

Test(params, defaults_are_spec_section_2)
{
    sebt_params p = sebt_params_default();
    cr_assert_eq(p.ema_fast, 96);
    cr_assert_eq(p.ema_slow, 672);
    cr_assert_eq(p.z_window, 672);
    cr_assert_eq(p.atr_window, 96);
    cr_assert_eq(p.vol_z, 2.0);
    cr_assert_eq(p.tr_z, 1.2);
    cr_assert_eq(p.cloc_min, 0.6);
    cr_assert(p.use_stop);
    cr_assert_eq(p.atr_stop_mult, 0.7);
    cr_assert(p.use_tp);
    cr_assert_eq(p.reward_r, 2.0);
    cr_assert(p.use_time);
    cr_assert_eq(p.max_hold, 96);
    cr_assert_eq(p.fee_bp, 5.0);
    cr_assert_eq(p.slippage_bp, 5.0);
    cr_assert(!p.use_rsi);
    cr_assert_eq(p.rsi_window, 14);
    cr_assert_eq(p.rsi_max, 30.0);
    cr_assert_eq(sebt_params_validate(&p, NULL), SEBT_OK);
}

Test(params, table_is_in_spec_order)
{
    const char *names[SEBT_N_PARAMS] = { "ema_fast", "ema_slow", "z_window", "atr_window", "vol_z",
                                         "tr_z", "cloc_min", "use_stop", "atr_stop_mult", "use_tp",
                                         "reward_r", "use_time", "max_hold", "fee_bp", "slippage_bp",
                                         "use_rsi", "rsi_window", "rsi_max" };
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        cr_assert_str_eq(sebt_param_table[i].name, names[i]);
        cr_assert_eq(sebt_param_index(names[i]), i);
    }
    cr_assert_eq(sebt_param_index("EMA_FAST"), -1);
    cr_assert_eq(sebt_param_index("nope"), -1);
}

Test(params, set_by_name)
{
    sebt_params p = sebt_params_default();
    cr_assert_eq(sebt_params_set(&p, "ema_fast", "12", NULL), SEBT_OK);
    cr_assert_eq(sebt_params_set(&p, "vol_z", "-0.25", NULL), SEBT_OK);
    cr_assert_eq(sebt_params_set(&p, "use_tp", "false", NULL), SEBT_OK);
    cr_assert_eq(p.ema_fast, 12);
    cr_assert_eq(p.vol_z, -0.25);
    cr_assert_not(p.use_tp);
    cr_assert_eq(sebt_params_get_double(&p, sebt_param_index("ema_fast")), 12.0);
    cr_assert_eq(sebt_params_get_double(&p, sebt_param_index("use_tp")), 0.0);
}

static void set_fails(const char *name, const char *value, const char *what)
{
    sebt_params p = sebt_params_default(), before = p;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_params_set(&p, name, value, &e), SEBT_ERR_PARAM, "%s=%s", name, value);
    cr_assert(strstr(e.msg, what) != NULL, "message '%s' does not say '%s'", e.msg, what);
    cr_assert(memcmp(&p, &before, sizeof p) == 0, "a failed set changed the params");
}

Test(params, set_rejects_bad_text)
{
    set_fails("ema_fast", "1.5", "parameter ema_fast: expected a whole number of bars, got '1.5'");
    set_fails("ema_fast", "", "ema_fast");
    set_fails("max_hold", "99999999999", "max_hold");
    set_fails("vol_z", "two", "parameter vol_z: expected a number, got 'two'");
    set_fails("use_stop", "yes", "parameter use_stop: expected true or false, got 'yes'");
    set_fails("emafast", "3", "unknown parameter 'emafast': did you mean ema_fast? (valid: ema_fast, ema_slow");
    set_fails("vol_zz", "3", "unknown parameter 'vol_zz': did you mean vol_z? (valid: ema_fast,");
    set_fails("spread", "3", "unknown parameter 'spread' (valid: ema_fast, ema_slow");
}

/* "Did you mean": worked out by hand, one edit (or two past 4 letters,
 * three past 8) from a name; nothing when no name is that near. */
Test(params, nearest_name_suggests_only_likely_typos)
{
    const char *const cmds[] = { "run", "features", "sweep", "merge", NULL, "validate" };
    cr_assert_eq(sebt_nearest_name("swep", cmds, 6), 2);      /* a deletion */
    cr_assert_eq(sebt_nearest_name("sweeep", cmds, 6), 2);    /* an insertion */
    cr_assert_eq(sebt_nearest_name("rnu", cmds, 6), 0);       /* a swap of neighbours */
    cr_assert_eq(sebt_nearest_name("vaildate", cmds, 6), 5);  /* a swap, past the NULL entry */
    cr_assert_eq(sebt_nearest_name("featurs", cmds, 6), 1);
    cr_assert_eq(sebt_nearest_name("merge", cmds, 6), 3);     /* a name is its own nearest */
    cr_assert_eq(sebt_nearest_name("rn", cmds, 6), 0);
    cr_assert_eq(sebt_nearest_name("ru", cmds, 6), 0);
    cr_assert_eq(sebt_nearest_name("xyz", cmds, 6), -1);      /* 3 edits from run */
    cr_assert_eq(sebt_nearest_name("swxxp", cmds, 6), 2);     /* two edits, 5 letters */
    cr_assert_eq(sebt_nearest_name("sxxxp", cmds, 6), -1);    /* three edits, 5 letters */
    cr_assert_eq(sebt_nearest_name("", cmds, 6), -1);
    cr_assert_eq(sebt_nearest_name(NULL, cmds, 6), -1);
    cr_assert_eq(sebt_nearest_name("swep", cmds, 0), -1);
    const char *const opts[] = { "--set", "--seed", "--data" };
    cr_assert_eq(sebt_nearest_name("--sett", opts, 3), 0);
    cr_assert_eq(sebt_nearest_name("--sed", opts, 3), 0);     /* a tie: the first wins */
    char longword[200];
    memset(longword, 'a', sizeof longword - 1);
    longword[sizeof longword - 1] = '\0';
    cr_assert_eq(sebt_nearest_name(longword, cmds, 6), -1);
}

static void validate_fails(const char *name, const char *value, const char *what)
{
    sebt_params p = sebt_params_default();
    cr_assert_eq(sebt_params_set(&p, name, value, NULL), SEBT_OK, "%s=%s", name, value);
    sebt_error e = { 0 };
    cr_assert_eq(sebt_params_validate(&p, &e), SEBT_ERR_PARAM, "%s=%s", name, value);
    cr_assert(strstr(e.msg, what) != NULL, "message '%s' does not say '%s'", e.msg, what);
}

static void validate_ok(const char *name, const char *value)
{
    sebt_params p = sebt_params_default();
    cr_assert_eq(sebt_params_set(&p, name, value, NULL), SEBT_OK, "%s=%s", name, value);
    sebt_error e = { 0 };
    cr_assert_eq(sebt_params_validate(&p, &e), SEBT_OK, "%s=%s: %s", name, value, e.msg);
}

Test(params, validate_each_rule_at_its_edge)
{
    validate_ok("ema_fast", "1");
    validate_fails("ema_fast", "0", "parameter ema_fast = 0 breaks its rule: must be >= 1");
    validate_ok("ema_slow", "1");
    validate_fails("ema_slow", "-3", "ema_slow = -3");
    validate_ok("z_window", "2");
    validate_fails("z_window", "1", "z_window = 1 breaks its rule: must be >= 2");
    validate_ok("atr_window", "1");
    validate_fails("atr_window", "0", "atr_window = 0");
    validate_ok("vol_z", "-5");
    validate_fails("vol_z", "nan", "vol_z = nan breaks its rule: must be finite");
    validate_fails("tr_z", "inf", "tr_z = inf");
    validate_fails("cloc_min", "-inf", "cloc_min = -inf");
    validate_ok("atr_stop_mult", "0");
    validate_fails("atr_stop_mult", "-0.1", "atr_stop_mult = -0.10000000000000001");
    validate_fails("reward_r", "0", "reward_r = 0 breaks its rule: must be finite and > 0");
    validate_ok("reward_r", "1e-9");
    validate_ok("max_hold", "1");
    validate_fails("max_hold", "0", "max_hold = 0");
    validate_ok("fee_bp", "0");
    validate_fails("fee_bp", "-1", "fee_bp = -1");
    validate_fails("slippage_bp", "nan", "slippage_bp = nan");
}

Test(params, format_reads_back)
{
    sebt_params p = sebt_params_default();
    char buf[64];
    sebt_params_format(&p, sebt_param_index("ema_slow"), buf, sizeof buf);
    cr_assert_str_eq(buf, "672");
    sebt_params_format(&p, sebt_param_index("tr_z"), buf, sizeof buf);
    cr_assert_str_eq(buf, "1.2");
    sebt_params_format(&p, sebt_param_index("cloc_min"), buf, sizeof buf);
    cr_assert_str_eq(buf, "0.6");   /* shortest: %.17g wrote 0.59999999999999998 */
    sebt_params_format(&p, sebt_param_index("use_time"), buf, sizeof buf);
    cr_assert_str_eq(buf, "true");
    /* Every field formatted and parsed back gives the same params. */
    sebt_params q = sebt_params_default();
    memset(&q, 0, sizeof q);
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        sebt_params_format(&p, i, buf, sizeof buf);
        cr_assert_eq(sebt_params_set(&q, sebt_param_table[i].name, buf, NULL), SEBT_OK, "%s", buf);
        cr_assert_eq(sebt_params_get_double(&q, i), sebt_params_get_double(&p, i), "%s",
                     sebt_param_table[i].name);
    }
}
