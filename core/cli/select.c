/* Backend selection: --backend NAME, else BACKTEST_BACKEND=cpu|gpu|auto. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_select_backend(const char *cmd, const char *flag_value, size_t bars, size_t combos,
                       const sebt_backend **out)
{
    (void)bars;
    (void)combos;
    const char *choice = flag_value;
    const char *source = "--backend";
    if (!choice || !*choice) {
        choice = getenv("BACKTEST_BACKEND");
        source = "BACKTEST_BACKEND";
    }
    if (!choice || !*choice)
        choice = "cpu";
    const char *name = choice;
    if (strcmp(choice, "cpu") == 0)
        name = "fast_cpu";
    else if (strcmp(choice, "gpu") == 0)
        name = "cuda";
    else if (strcmp(choice, "auto") == 0)
        name = "fast_cpu";
    sebt_error err = { 0 };
    if (sebt_backend_get(name, out, &err) != SEBT_OK) {
        if (err.code == SEBT_ERR_USAGE)
            return cli_usage_error(cmd, "%s=%s: unknown backend (valid: cpu, gpu, auto, reference, "
                                   "fast_cpu, cuda)", source, choice);
        if (strcmp(name, "cuda") == 0 && err.code == SEBT_ERR_UNAVAILABLE)
            err.code = SEBT_ERR_NODEVICE;
        return cli_report_error(cmd, &err);
    }
    return CLI_EXIT_OK;
}

