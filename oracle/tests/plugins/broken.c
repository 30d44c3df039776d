/* Plugins that are broken on purpose, one way each (-DBROKEN_<WAY>), so the
 * tests can show that sebt refuses or reports each with a clear message:
 *   ABI       built for another plugin ABI
 *   NOSYM     exports no sebt_backend_plugin
 *   NULLFN    a table without run_batch
 *   NODEVICE  needs a device that is not there (exit 3)
 *   CRASH     loads fine, then dies of SIGSEGV inside run_batch
 * The working parts delegate to libsebt's checks and return no trades. */
#include <signal.h>
#include <string.h>

#include <sebt/plugin.h>
#include <sebt/sebt.h>

static sebt_status features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                            sebt_features *out, sebt_error *err)
{
    (void)self;
    (void)out;
    sebt_status st = sebt_params_validate(p, err);
    return st != SEBT_OK ? st : sebt_series_check(s, err);
}

#ifdef BROKEN_NULLFN
__attribute__((unused))
#endif
static sebt_status run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                             size_t n, const sebt_batch_opts *opts, sebt_result *results, sebt_error *err)
{
    (void)self;
    (void)opts;
    (void)combos;
#ifdef BROKEN_CRASH
    if (s->n > 0)
        raise(SIGSEGV);
#endif
    (void)s;
    for (size_t i = 0; i < n; i++)
        memset(&results[i], 0, sizeof results[i]);
    (void)err;
    return SEBT_OK;
}

static const sebt_backend broken = {
    .name = "broken",
    .description = "a test plugin broken on purpose",
    .contract = { SEBT_CONTRACT_EXACT, 0.0 },
    .features = features,
#ifndef BROKEN_NULLFN
    .run_batch = run_batch,
#endif
};

#ifndef BROKEN_NOSYM
SEBT_PLUGIN_ENTRY
{
    (void)&broken;
#if defined(BROKEN_ABI)
    (void)abi_version;
    err->code = SEBT_ERR_USAGE;
    snprintf(err->msg, sizeof err->msg, "plugin ABI mismatch: the plugin was built for sebt plugin ABI 99, "
             "this sebt speaks ABI %d", abi_version);
    return NULL;
#elif defined(BROKEN_NODEVICE)
    (void)abi_version;
    sebt_fail(err, SEBT_ERR_NODEVICE, "no CUDA device is visible to this process");
    return NULL;
#else
    if (!sebt_plugin_abi_check(abi_version, err))
        return NULL;
    return &broken;
#endif
}
#else
SEBT_PLUGIN_EXPORT const sebt_backend *not_the_entry_point(void);
SEBT_PLUGIN_EXPORT const sebt_backend *not_the_entry_point(void) { return &broken; }
#endif
