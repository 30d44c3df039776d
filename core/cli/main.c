#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} commands[] = {
    { "run", cli_cmd_run, "one backtest of one combo over a data file" },
    { "features", cli_cmd_features, "the indicator columns and signal of one combo, as CSV" },
    { "backends", cli_cmd_backends, "the backends built into this binary and their contracts" },
    { "sweep", cli_cmd_sweep, "backtest a grid or a list of combos" },
    { "parity", cli_cmd_parity, "check a backend against the reference on real data" },
    { "fuzz", cli_cmd_fuzz, "differential fuzzing of a backend against the reference" },
    { "report", cli_cmd_report, "benchmark and write a performance report" },
    { "check-gpu", cli_cmd_check_gpu, "the GPUs this process can use and what each mode would pick" },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: sebt COMMAND [OPTIONS]\n\n"
               "Seller-exhaustion backtests on several backends, checked against a reference.\n\n"
               "Commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'sebt COMMAND --help' for a command's options.\n"
               "Exit codes: 0 success, 1 a check failed, 2 bad usage or input, 3 no usable GPU.\n"
               "Environment: BACKTEST_BACKEND=cpu|gpu|auto, BACKTEST_GPU_ID, OMP_NUM_THREADS.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("sebt %s\n", SEBT_VERSION);
        return CLI_EXIT_OK;
    }
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    fprintf(stderr, "sebt: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
