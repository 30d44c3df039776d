#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "mpi.h"
#include "options.h"
#include "sebt/outfile.h"
#include "sebt/spawn.h"
#include "sebt_git.h"

/* The commands, in the order of `sebt --help`; each declares its options in
 * its own file (cli/options.h). */
const cli_command *const cli_commands[] = {
    &cli_cmd_run_spec, &cli_cmd_features_spec, &cli_cmd_backends_spec, &cli_cmd_sweep_spec,
    &cli_cmd_split_spec, &cli_cmd_walkforward_spec, &cli_cmd_plot_spec,
    &cli_cmd_merge_spec, &cli_cmd_parity_spec, &cli_cmd_fuzz_spec, &cli_cmd_validate_spec,
    &cli_cmd_report_spec, &cli_cmd_check_gpu_spec, &cli_cmd_completion_spec,
};
const size_t cli_n_commands = sizeof cli_commands / sizeof cli_commands[0];

static void usage(FILE *f)
{
    fprintf(f, "Usage: sebt COMMAND [OPTIONS]\n\n"
               "Seller-exhaustion backtests on several backends, checked against a reference.\n\n"
               "Commands:\n");
    for (size_t i = 0; i < cli_n_commands; i++)
        fprintf(f, "  %-10s %s\n", cli_commands[i]->name, cli_commands[i]->summary);
    fprintf(f, "\nRun 'sebt help COMMAND' (or 'sebt COMMAND --help') for a command's options,\n"
               "'sebt --version' for the version, the commit and what this build includes.\n"
               "Exit codes: 0 success, 1 a check failed, 2 bad usage or input, 3 no usable GPU,\n"
               "  4 inconclusive (sebt report --baseline), 5 out of memory.\n"
               "Environment: BACKTEST_BACKEND=cpu|gpu|auto, BACKTEST_GPU_ID, OMP_NUM_THREADS.\n");
}

/* "sebt: error: unknown command 'swep'; did you mean sweep?" */
static void unknown_command(const char *who, const char *word)
{
    const char *near = cli_nearest_command(word);
    if (near)
        fprintf(stderr, "%s: error: unknown command '%s'; did you mean %s?\n", who, word, near);
    else
        fprintf(stderr, "%s: error: unknown command '%s'\n", who, word);
}

/* An interrupted run stops the programs it started (gnuplot, sebt_bench:
 * each in its own process group, so the terminal's Ctrl-C reaches them
 * only through here, after which nothing writes any more), leaves no
 * temporary output file or folder behind (the target keeps its previous
 * contents), then dies of the same signal, so that the shell sees what
 * happened. */
static void on_fatal_signal(int sig)
{
    /* Once the command's output is being put in place, the run ends as it
     * would have without the signal: exit 0 with the new file complete, or
     * its own error. 128+N is kept for a run that changed no file. SIGPIPE
     * is sebt's own write failing, and SIGBUS a mapped file cut short: not
     * a request to stop, so never held. */
    if (sig != SIGPIPE && sig != SIGBUS && cli_outputs_are_landing())
        return;
    if (sig == SIGBUS) {
        /* What sebt maps is a series cache entry (core/series_cache.c): one
         * cut short while in use ends the run here, not in wrong numbers. */
        static const char msg[] = "sebt: error: SIGBUS: a file sebt had mapped (a series cache entry) was cut short "
                                  "while in use; the run stopped and wrote no --output file (run again: the entry "
                                  "is parsed anew)\n";
        ssize_t ignored = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)ignored;
    }
    sebt_kernels_kill();
    sebt_children_stop();
    sebt_outfile_remove_temps();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A write past the file-size limit (ulimit -f, RLIMIT_FSIZE) raises
 * SIGXFSZ, whose default action kills sebt with no word and leaves its
 * temporary file. Caught, the write fails with EFBIG instead, and the
 * output's error path says "File too large", removes the temporary file and
 * exits 2. A handler, not SIG_IGN: a program sebt starts gets the default
 * action back at exec. */
static void on_file_size_limit(int sig)
{
    (void)sig;
}

static void install_signal_handlers(void)
{
    struct sigaction xfsz;
    memset(&xfsz, 0, sizeof xfsz);
    xfsz.sa_handler = on_file_size_limit;
    sigemptyset(&xfsz.sa_mask);
    xfsz.sa_flags = SA_RESTART;
    struct sigaction old_xfsz;
    if (sigaction(SIGXFSZ, NULL, &old_xfsz) == 0 && old_xfsz.sa_handler != SIG_IGN)
        sigaction(SIGXFSZ, &xfsz, NULL);

    /* Every signal that would end sebt (sebt_ending_signals), and SIGBUS:
     * one handler, during which none of them interrupts the clean-up. */
    sigset_t ending;
    sebt_ending_signals(&ending);
    sigaddset(&ending, SIGBUS);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal_signal;
    sa.sa_mask = ending;
    /* SIGPIPE always: a closed pipe (sebt run | head -1) ends sebt quietly
     * the Unix way even when a parent left SIGPIPE ignored, where each
     * write would otherwise fail with an error message. The others keep
     * an inherited "ignore" (nohup). */
    for (int sig = 1; sig < NSIG; sig++) {
        struct sigaction old;
        if (sigismember(&ending, sig) != 1 ||
            (sig != SIGPIPE && sigaction(sig, NULL, &old) == 0 && old.sa_handler == SIG_IGN))
            continue;
        sigaction(sig, &sa, NULL);
    }
    atexit(sebt_outfile_remove_temps);
    atexit(sebt_children_stop); /* runs first: nothing writes while temps go */
}

/* What this binary is: the version, the commit it was built from and how
 * (cmake fills the SEBT_BUILT_* switches), and where each optional part is
 * found now, beside this sebt. The first line is what help2man reads. */
static void version_part(const char *what, bool built, const char *why_not, const char *file)
{
    char path[4096];
    if (!built) {
        printf("%-22s not built (%s)\n", what, why_not);
    } else if (sebt_part_path(file, path, sizeof path)) {
        printf("%-22s %s\n", what, path);
    } else {
        printf("%-22s built, but not found at %s\n", what, path);
    }
}

static int version(int argc, char **argv)
{
    if (argc > 2) {
        fprintf(stderr, "sebt: error: --version takes nothing after it, got '%s'\n", argv[2]);
        return CLI_EXIT_USAGE;
    }
    printf("sebt %s\n", SEBT_VERSION);
    printf("%-22s %s\n", "commit:", SEBT_GIT_COMMIT);
    printf("%-22s %s, %s\n", "built:", SEBT_BUILT_TYPE, SEBT_BUILT_COMPILER);
    printf("%-22s %s\n", "OpenMP:", SEBT_BUILT_OPENMP ? "yes (fast_cpu on every core)" : "no (fast_cpu on one thread)");
    printf("%-22s %s\n", "zlib:", SEBT_BUILT_ZLIB ? "yes (.gz data files)" : "no (.gz data files are refused)");
    char cache[4096];
    const char *cache_dir = cli_series_cache_dir(cache, sizeof cache);
    if (!sebt_series_cache_available())
        printf("%-22s %s\n", "series cache:", "off (built without xxhash, or no build ID)");
    else if (!cache_dir)
        printf("%-22s %s\n", "series cache:", "off (SEBT_CACHE_DIR is off, or no HOME folder)");
    else
        printf("%-22s %s (SEBT_CACHE_DIR=off turns it off)\n", "series cache:", cache_dir);
    version_part("cuda module:", SEBT_BUILT_CUDA, "no CUDA compiler", "libsebt_cuda.so");
    version_part("cuda host execution:", SEBT_BUILT_CUDA_HOST, "no C++ compiler", "libsebt_cuda_host.so");
    version_part("MPI module:", SEBT_BUILT_MPI, "no MPI", "libsebt_mpi.so");
    version_part("benchmarks:", SEBT_BUILT_BENCH, "no Google Benchmark", "sebt_bench");
    const char *share = sebt_data_dir();
    printf("%-22s %s\n", "shared files:", share ? share : "not found (set SEBT_SHARE_DIR)");
    return CLI_EXIT_OK;
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
        const cli_command *c = cli_find_command(argv[2]);
        if (!c || argc > 3) {
            if (!c)
                unknown_command("sebt help", argv[2]);
            else
                fprintf(stderr, "sebt help: error: expected one command, got %d words\n", argc - 2);
            fprintf(stderr, "Try 'sebt --help' for the list of commands.\n");
            return CLI_EXIT_USAGE;
        }
        char *help_argv[] = { (char *)c->name, (char *)"--help", NULL };
        return c->fn(2, help_argv);
    }
    if (strcmp(argv[1], "--version") == 0)
        return version(argc, argv);
    if (strcmp(argv[1], "__options") == 0)
        return cli_list_options(argc == 3 ? argv[2] : NULL);
    int bad = cli_check_omp_env();
    if (bad)
        return bad;
    sebt_error lerr = { 0 };
    if (sebt_check_limit_env(&lerr) != SEBT_OK)
        return cli_report_error(argv[1], &lerr);
    const cli_command *c = cli_find_command(argv[1]);
    if (c) {
        int launched = cli_mpi_launcher_size();
        if (c->mpi && launched != 0) {
            int rc = cli_mpi_start(c->name);
            if (rc != CLI_EXIT_OK)
                return rc;
        } else if (launched > 1) {
            const char *r = getenv("OMPI_COMM_WORLD_RANK");
            if (r && strcmp(r, "0") != 0)
                return CLI_EXIT_USAGE;    /* rank 0 says it, once */
            fprintf(stderr, "sebt %s: error: started by an MPI launcher with %d processes, but '%s' does not "
                    "share its work across ranks (sweep and fuzz do): run it once, without mpirun\n",
                    c->name, launched, c->name);
            return CLI_EXIT_USAGE;
        }
        int rc = c->fn(argc - 1, argv + 1);
        cli_mpi_finish();
        return rc;
    }
    unknown_command("sebt", argv[1]);
    fputc('\n', stderr);
    usage(stderr);
    return CLI_EXIT_USAGE;
}
