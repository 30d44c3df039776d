#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mpi.h"
#include "sebt/outfile.h"

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
    bool mpi;     /* shares its work across the ranks of an MPI job */
} commands[] = {
    { "run", cli_cmd_run, "one backtest of one combo over a data file", false },
    { "features", cli_cmd_features, "the indicator columns and signal of one combo, as CSV", false },
    { "backends", cli_cmd_backends, "the backends built into this binary and their contracts", false },
    { "sweep", cli_cmd_sweep, "backtest a grid or a list of combos", true },
    { "merge", cli_cmd_merge, "join the shard files of `sweep --shard` into the whole sweep's output", false },
    { "parity", cli_cmd_parity, "check a backend against the reference on real data", false },
    { "fuzz", cli_cmd_fuzz, "differential fuzzing of a backend against the reference", true },
    { "validate", cli_cmd_validate, "the release gate for one backend or plugin: replay, parity, fuzz, speed", false },
    { "report", cli_cmd_report, "benchmark and write a performance report", false },
    { "check-gpu", cli_cmd_check_gpu, "the GPUs this process can use and what each mode would pick", false },
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: sebt COMMAND [OPTIONS]\n\n"
               "Seller-exhaustion backtests on several backends, checked against a reference.\n\n"
               "Commands:\n");
    for (size_t i = 0; i < N_COMMANDS; i++)
        fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\nRun 'sebt help COMMAND' (or 'sebt COMMAND --help') for a command's options.\n"
               "Exit codes: 0 success, 1 a check failed, 2 bad usage or input, 3 no usable GPU.\n"
               "Environment: BACKTEST_BACKEND=cpu|gpu|auto, BACKTEST_GPU_ID, OMP_NUM_THREADS.\n");
}

/* An interrupted run leaves no temporary output file behind (the target
 * keeps its previous contents), then dies of the same signal, so that the
 * shell sees what happened. */
static void on_fatal_signal(int sig)
{
    sebt_outfile_remove_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sigemptyset(&sa.sa_mask);
    /* SIGPIPE always: a closed pipe (sebt run | head -1) ends sebt quietly
     * the Unix way even when a parent left SIGPIPE ignored, where each
     * write would otherwise fail with an error message. The others keep
     * an inherited "ignore" (nohup). */
    const int sigs[] = { SIGPIPE, SIGINT, SIGTERM, SIGHUP };
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction old;
        if (sigs[i] != SIGPIPE && sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(sigs[i], &sa, NULL);
    }
    atexit(sebt_outfile_remove_temps);
}

static int find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0)
            return (int)i;
    return -1;
}

int main(int argc, char **argv)
{
    install_signal_handlers();
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        (strcmp(argv[1], "help") == 0 && argc == 2)) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "help") == 0) {
        /* sebt help CMD is sebt CMD --help. */
        int k = find_command(argv[2]);
        if (k < 0 || argc > 3) {
            if (k < 0)
                fprintf(stderr, "sebt help: error: unknown command '%s'\n", argv[2]);
            else
                fprintf(stderr, "sebt help: error: expected one command, got %d words\n", argc - 2);
            fprintf(stderr, "Try 'sebt --help' for the list of commands.\n");
            return CLI_EXIT_USAGE;
        }
        char *help_argv[] = { (char *)commands[k].name, (char *)"--help", NULL };
        return commands[k].fn(2, help_argv);
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("sebt %s\n", SEBT_VERSION);
        return CLI_EXIT_OK;
    }
    int k = find_command(argv[1]);
    if (k >= 0) {
        int launched = cli_mpi_launcher_size();
        if (commands[k].mpi && launched != 0) {
            int rc = cli_mpi_start(commands[k].name);
            if (rc != CLI_EXIT_OK)
                return rc;
        } else if (launched > 1) {
            const char *r = getenv("OMPI_COMM_WORLD_RANK");
            if (r && strcmp(r, "0") != 0)
                return CLI_EXIT_USAGE;    /* rank 0 says it, once */
            fprintf(stderr, "sebt %s: error: started by an MPI launcher with %d processes, but '%s' does not "
                    "share its work across ranks (sweep and fuzz do): run it once, without mpirun\n",
                    commands[k].name, launched, commands[k].name);
            return CLI_EXIT_USAGE;
        }
        int rc = commands[k].fn(argc - 1, argv + 1);
        cli_mpi_finish();
        return rc;
    }
    fprintf(stderr, "sebt: error: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
