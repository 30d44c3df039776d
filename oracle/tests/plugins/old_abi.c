/* A plugin built for sebt plugin ABI 1, before sebt_params grew: what such
 * a binary carries, written out here since this tree's headers are of the
 * later ABI. Its entry point holds ABI 1's inline check and it exports no
 * sebt_plugin_abi, so sebt must call it and it refuses, naming both
 * versions. -DOLD_EXPORTS: a plugin that says it is ABI 1 (sebt_plugin_abi)
 * and never checks: sebt must refuse it without calling anything of it,
 * and anything called aborts. */
#include <stdio.h>
#include <stdlib.h>

#include <sebt/plugin.h>

#define OLD_ABI 1

static sebt_status features(const sebt_backend *self, const sebt_series *s, const sebt_params *p,
                            sebt_features *out, sebt_error *err)
{
    (void)self, (void)s, (void)p, (void)out, (void)err;
    fprintf(stderr, "old_abi: called with parameters of another layout\n");
    abort();
}

static sebt_status run_batch(const sebt_backend *self, const sebt_series *s, const sebt_params *combos,
                             size_t n_combos, const sebt_batch_opts *opts, sebt_result *results, sebt_error *err)
{
    (void)self, (void)s, (void)combos, (void)n_combos, (void)opts, (void)results, (void)err;
    fprintf(stderr, "old_abi: called with parameters of another layout\n");
    abort();
}

static const sebt_backend old = {
    .name = "old_abi",
    .description = "a plugin built for sebt plugin ABI 1",
    .contract = { SEBT_CONTRACT_EXACT, 0.0 },
    .features = features,
    .run_batch = run_batch,
};

#ifdef OLD_EXPORTS
SEBT_PLUGIN_EXPORT extern const int sebt_plugin_abi;
SEBT_PLUGIN_EXPORT const int sebt_plugin_abi = OLD_ABI;
#endif

SEBT_PLUGIN_EXPORT const sebt_backend *sebt_backend_plugin(int abi_version, sebt_error *err);
SEBT_PLUGIN_EXPORT const sebt_backend *sebt_backend_plugin(int abi_version, sebt_error *err)
{
#ifdef OLD_EXPORTS
    (void)abi_version, (void)err, (void)&old;
    fprintf(stderr, "old_abi: entry point called\n");
    abort();
#else
    /* ABI 1's sebt_plugin_abi_check, as compiled into such a plugin */
    if (abi_version == OLD_ABI)
        return &old;
    if (err) {
        err->code = SEBT_ERR_USAGE;
        snprintf(err->msg, sizeof err->msg,
                 "plugin ABI mismatch: the plugin was built for sebt plugin ABI %d, this sebt "
                 "speaks ABI %d; rebuild the plugin against this sebt's headers",
                 OLD_ABI, abi_version);
    }
    return NULL;
#endif
}
