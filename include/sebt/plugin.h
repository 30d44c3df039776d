/* The plugin ABI: how a backend built outside sebt is plugged in.
 *
 * A plugin is a shared library that exports one function,
 *
 *     const sebt_backend *sebt_backend_plugin(int abi_version, sebt_error *err);
 *
 * sebt passes the ABI version it speaks (SEBT_PLUGIN_ABI_VERSION of its own
 * headers). The plugin returns its backend table, which must stay valid
 * until the process exits (sebt never unloads a plugin), or NULL with err
 * filled: SEBT_ERR_USAGE for a version it was not built for (use
 * sebt_plugin_abi_check below), SEBT_ERR_NODEVICE when it needs a device
 * that is not there (sebt exits 3), anything else for other reasons (exit 2).
 *
 * Wherever sebt takes a backend (--backend, BACKTEST_BACKEND), a value that
 * contains '/' or ends in ".so" is the path of a plugin. The table must have
 * a non-empty name, features and run_batch, and a contract: exact (tol 0),
 * or tolerant with 0 < tol < 1. Its functions follow include/sebt/backend.h;
 * trades are malloc'd (sebt frees them with free()).
 *
 * The version changes whenever sebt_backend, sebt_batch_opts or a type they
 * use (sebt_params and sebt_features among them: sebt/strategy.def)
 * changes layout or meaning; a plugin built against another version is
 * refused with a message naming both, never run. SEBT_PLUGIN_ENTRY also
 * exports the version the plugin was built for (sebt_plugin_abi), which
 * sebt reads before it calls anything of the plugin's; a plugin without it
 * (built for ABI 1, or with an entry point of its own) is asked through
 * sebt_plugin_abi_check.
 *
 * A plugin may call what libsebt exports (include/sebt/sebt.h: errors,
 * series, parameters, features and results allocation, the loader), linking
 * with `pkg-config --libs sebt` or CMake's `find_package(sebt)` target
 * sebt::sebt. This header compiles with plain -std=c11. */
#ifndef SEBT_PLUGIN_H
#define SEBT_PLUGIN_H

#include <stdio.h>

#include "sebt/backend.h"
#include "sebt/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1: sebt_backend and sebt_batch_opts as in sebt 0.1 (with memory_budget
 *    and stats in the options).
 * 2: sebt_params with the RSI entry filter's use_rsi, rsi_window and
 *    rsi_max (18 fields), sebt_features with its rsi column (8 columns);
 *    the entry point exports sebt_plugin_abi. */
#define SEBT_PLUGIN_ABI_VERSION 2
#define SEBT_PLUGIN_SYMBOL "sebt_backend_plugin"
#define SEBT_PLUGIN_ABI_SYMBOL "sebt_plugin_abi"

typedef const sebt_backend *(*sebt_backend_plugin_fn)(int abi_version, sebt_error *err);

#if defined(__GNUC__)
#define SEBT_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define SEBT_PLUGIN_EXPORT
#endif

/* Declares the entry point with C linkage and default visibility, so it is
 * exported even from a library built with -fvisibility=hidden or by nvcc,
 * and beside it the ABI version it was built for. */
#ifdef __cplusplus
#define SEBT_PLUGIN_ENTRY \
    extern "C" SEBT_PLUGIN_EXPORT const int sebt_plugin_abi = SEBT_PLUGIN_ABI_VERSION; \
    extern "C" SEBT_PLUGIN_EXPORT const sebt_backend *sebt_backend_plugin(int abi_version, sebt_error *err)
#else
#define SEBT_PLUGIN_ENTRY \
    SEBT_PLUGIN_EXPORT extern const int sebt_plugin_abi; \
    SEBT_PLUGIN_EXPORT const int sebt_plugin_abi = SEBT_PLUGIN_ABI_VERSION; \
    SEBT_PLUGIN_EXPORT const sebt_backend *sebt_backend_plugin(int abi_version, sebt_error *err)
#endif

/* The check every entry point starts with: 1 when sebt speaks the version
 * this plugin was compiled against; else 0 with err saying both. Inline so
 * a plugin needs no library for it. */
static inline int sebt_plugin_abi_check(int abi_version, sebt_error *err)
{
    if (abi_version == SEBT_PLUGIN_ABI_VERSION)
        return 1;
    if (err) {
        err->code = SEBT_ERR_USAGE;
        snprintf(err->msg, sizeof err->msg,
                 "plugin ABI mismatch: the plugin was built for sebt plugin ABI %d, this sebt "
                 "speaks ABI %d; rebuild the plugin against this sebt's headers",
                 SEBT_PLUGIN_ABI_VERSION, abi_version);
    }
    return 0;
}

#ifdef __cplusplus
}
#endif

#endif
