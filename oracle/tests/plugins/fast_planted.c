/* fast_cpu compiled again, from a copy of its sources with one slip
 * planted (oracle/tests/CMakeLists.txt makes the copy at configure time,
 * so the shipped sources carry no mutation hook), as a plugin named
 * FAST_PLANTED_NAME: what `sebt validate` must catch in fast_cpu's
 * fast paths (planted_gate.sh). */
#include <sebt/backends.h>
#include <sebt/plugin.h>

static sebt_backend planted;

SEBT_PLUGIN_EXPORT const sebt_backend *sebt_backend_plugin(int abi_version, sebt_error *err)
{
    if (!sebt_plugin_abi_check(abi_version, err))
        return NULL;
    planted = sebt_fast_cpu_backend;   /* this plugin's own copy (linked -Bsymbolic) */
    planted.name = FAST_PLANTED_NAME;
    planted.description = "test plugin: fast_cpu with one planted slip (oracle/tests/plugins/fast_planted.c)";
    return &planted;
}
