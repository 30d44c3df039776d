/* A plugin that misbehaves on demand, one way at a time, chosen at run time
 * by SEBT_LIAR=WAY, so the tests can show that sebt never prints, writes or
 * passes what it returns (cli/tests/results_check_test.sh):
 *   (unset)        honest: no trades, every metric 0
 *   nomsg          run_batch fails with SEBT_ERR_INTERNAL and no message
 *   unknown        run_batch returns status 99
 *   n_negative     n = -5
 *   n_mismatch     n = 2, n_trades = 0
 *   win_rate       win_rate = 7.5
 *   max_dd         max_dd = +100
 *   valid_bars     valid_bars = bars + 1
 *   reason         one trade with exit reason 99
 *   backwards      one trade whose exit bar is before its entry bar
 *   overread       n = n_trades = 5 with an array of one trade
 *   open_byte      open_at_end holds the byte 7
 *   signal_byte    features: a signal byte of 7
 *   loop           run_batch never returns (asleep)
 *   crash_entry    the entry point dies of SIGSEGV
 *   crash_run      run_batch dies of SIGFPE
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sebt/plugin.h>
#include <sebt/sebt.h>

static int is(const char *way)
{
    const char *v = getenv("SEBT_LIAR");
    return v && strcmp(v, way) == 0;
}

static sebt_status features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                            sebt_features *out, sebt_error *err)
{
    (void)self;
    sebt_status st = sebt_params_validate(p, err);
    if (st != SEBT_OK)
        return st;
    if (is("signal_byte") && out->n > 0)
        out->signal[out->n / 2] = 7;
    return sebt_series_check(s, err);
}

static sebt_status run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                             size_t n, const sebt_batch_opts *opts, sebt_result *results, sebt_error *err)
{
    (void)self;
    (void)combos;
    if (is("nomsg"))
        return SEBT_ERR_INTERNAL;
    if (is("unknown"))
        return (sebt_status)99;
    /* Hung asleep, not spinning: the same call that never returns, without
     * taking a core from the tests that run beside it for the minute the
     * default --call-timeout waits. */
    if (is("loop"))
        for (;;)
            pause();
    if (is("crash_run"))
        raise(SIGFPE);
    for (size_t i = 0; i < n; i++) {
        sebt_result *r = &results[i];
        memset(r, 0, sizeof *r);
        r->valid_bars = s->n;
        if (is("n_negative"))
            r->metrics.n = -5;
        if (is("n_mismatch"))
            r->metrics.n = 2;
        if (is("win_rate"))
            r->metrics.win_rate = 7.5;
        if (is("max_dd"))
            r->metrics.max_dd = 100;
        if (is("valid_bars"))
            r->valid_bars = s->n + 1;
        if (is("open_byte"))
            memset(&r->open_at_end.open, 7, 1);
        if ((is("reason") || is("backwards") || is("overread")) && s->n >= 4) {
            r->metrics.n = 1;
            r->n_trades = 1;
            if (is("overread"))
                r->metrics.n = (int64_t)(r->n_trades = 5);
            if (opts->want_trades) {
                r->trades = calloc(1, sizeof *r->trades);
                if (!r->trades)
                    return sebt_fail(err, SEBT_ERR_NOMEM, "liar: out of memory");
                sebt_trade *t = r->trades;
                t->signal_index = 0;
                t->entry_index = 1;
                t->exit_index = is("backwards") ? 0 : 3;
                t->bars_held = 1;
                t->reason = is("reason") ? (sebt_exit_reason)99 : SEBT_EXIT_STOP;
            }
        }
    }
    return SEBT_OK;
}

static const sebt_backend liar = {
    .name = "liar",
    .description = "a test plugin that misbehaves on demand (SEBT_LIAR)",
    .contract = { SEBT_CONTRACT_EXACT, 0.0 },
    .features = features,
    .run_batch = run_batch,
};

SEBT_PLUGIN_ENTRY
{
    if (is("crash_entry"))
        raise(SIGSEGV);
    if (!sebt_plugin_abi_check(abi_version, err))
        return NULL;
    return &liar;
}
