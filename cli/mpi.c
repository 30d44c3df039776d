/* The `sebt` command under an MPI launcher (cli/mpi.h). */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/mpi/sebt_mpi_api.h"
#include "cli.h"
#include "mpi.h"

cli_world cli_mpi = { .active = false, .rank = 0, .size = 1, .local_rank = 0, .local_size = 1 };
static const sebt_mpi_api *api;

static int env_int(const char *name)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return *end || x < 0 || x > 1 << 24 ? -1 : (int)x;
}

int cli_mpi_launcher_size(void)
{
    const char *force = getenv("SEBT_MPI");
    if (force && strcmp(force, "0") == 0)
        return 0;
    int n;
    if ((n = env_int("OMPI_COMM_WORLD_SIZE")) > 0)    /* Open MPI's mpirun */
        return n;
    if ((n = env_int("PMI_SIZE")) > 0)                /* MPICH/Hydra, srun --mpi=pmi2 */
        return n;
    /* srun: a job step's tasks (a batch script's own shell has no step
     * task count, so a plain `sebt` inside sbatch stays one process). */
    if (getenv("SLURM_STEP_ID") && env_int("SLURM_PROCID") >= 0 && (n = env_int("SLURM_STEP_NUM_TASKS")) > 0)
        return n;
    if (getenv("PMIX_RANK"))                          /* PMIx without a size: ask MPI */
        return -1;
    if (force && strcmp(force, "1") == 0)
        return -1;
    return 0;
}

static void *open_module(char *tried, size_t tried_size)
{
    const char *env = getenv("SEBT_MPI_LIBRARY");
    char paths[1][4096];
    int n = 0;
    if (env && *env)
        snprintf(paths[n++], sizeof paths[0], "%s", env);
    else    /* PREFIX/lib/sebt, or the top of the build folder (core/paths.c) */
        sebt_part_path("libsebt_mpi.so", paths[n++], sizeof paths[0]);
    tried[0] = '\0';
    for (int i = 0; i < n; i++) {
        /* RTLD_GLOBAL: Open MPI's own plugins resolve libmpi's symbols
         * through the global scope. */
        void *h = dlopen(paths[i], RTLD_NOW | RTLD_GLOBAL);
        if (h)
            return h;
        size_t used = strlen(tried);
        snprintf(tried + used, tried_size - used, "%s%s (%s)", used ? "; " : "", paths[i], dlerror());
    }
    return NULL;
}

int cli_mpi_start(const char *cmd)
{
    int launched = cli_mpi_launcher_size();
    if (launched == 0)
        return CLI_EXIT_OK;
    char tried[9000];
    void *h = open_module(tried, sizeof tried);
    if (!h) {
        if (launched == 1)
            return CLI_EXIT_OK;     /* mpirun -np 1: one process is one process */
        fprintf(stderr, "sebt %s: error: started by an MPI launcher (%d processes) but this sebt has no MPI "
                "module: %s. Each process would run the whole job; build sebt with MPI (libopenmpi-dev) "
                "or run it without mpirun\n", cmd, launched, tried);
        return CLI_EXIT_USAGE;
    }
    sebt_mpi_module_fn fn;
    void *sym = dlsym(h, SEBT_MPI_MODULE_SYMBOL);
    memcpy(&fn, &sym, sizeof fn);
    const sebt_mpi_api *a = fn ? fn() : NULL;
    if (!a || a->abi != SEBT_MPI_ABI) {
        fprintf(stderr, "sebt %s: error: the MPI module is from another build of sebt (ABI %d, expected %d)\n",
                cmd, a ? a->abi : -1, SEBT_MPI_ABI);
        return CLI_EXIT_USAGE;
    }
    char msg[256] = "";
    if (a->init(&cli_mpi.rank, &cli_mpi.size, &cli_mpi.local_rank, &cli_mpi.local_size, msg, sizeof msg)) {
        fprintf(stderr, "sebt %s: error: %s\n", cmd, msg[0] ? msg : "MPI did not start");
        return CLI_EXIT_USAGE;
    }
    api = a;
    cli_mpi.active = true;
    if (launched > 1 && cli_mpi.size != launched) {
        /* srun without an MPI plugin: N processes that each think they
         * are alone would each run the whole job. */
        if (cli_mpi.rank == 0)
            fprintf(stderr, "sebt %s: error: the launcher started %d processes but MPI sees %d; with srun, "
                    "give --mpi=pmix (or pmi2) so the processes join one job\n", cmd, launched, cli_mpi.size);
        cli_mpi_finish();
        return CLI_EXIT_USAGE;
    }
    /* One rank per GPU on a node: the local rank picks the device unless
     * the user pinned one. */
    if (!getenv("BACKTEST_GPU_ID")) {
        char id[16];
        snprintf(id, sizeof id, "%d", cli_mpi.local_rank);
        setenv("BACKTEST_GPU_ID", id, 1);
    }
    return CLI_EXIT_OK;
}

void cli_mpi_finish(void)
{
    if (api) {
        fflush(stdout);
        fflush(stderr);
        api->finalize();
        api = NULL;
    }
}

_Noreturn void cli_mpi_abort(int code)
{
    fflush(stdout);
    fflush(stderr);
    if (api)
        api->abort(code);
    exit(code);
}

static bool reduce(uint64_t *v, int n, int op)
{
    return !api || api->allreduce_u64(v, n, op) == 0;
}

bool cli_mpi_sum_u64(uint64_t *v, int n) { return reduce(v, n, SEBT_MPI_SUM); }
bool cli_mpi_max_u64(uint64_t *v, int n) { return reduce(v, n, SEBT_MPI_MAX); }
bool cli_mpi_min_u64(uint64_t *v, int n) { return reduce(v, n, SEBT_MPI_MIN); }

int cli_mpi_agree(int rc)
{
    uint64_t v = (uint64_t)(rc < 0 ? 0 : rc);
    cli_mpi_max_u64(&v, 1);
    return (int)v;
}

bool cli_mpi_gather(const void *buf, uint64_t len, void **out, uint64_t *out_len)
{
    if (!api) {
        void *copy = malloc(len ? (size_t)len : 1);
        if (!copy)
            return false;
        memcpy(copy, buf, (size_t)len);
        *out = copy;
        *out_len = len;
        return true;
    }
    return api->gather_bytes(buf, len, out, out_len) == 0;
}

bool cli_mpi_bcast(void *buf, uint64_t len, int root)
{
    return !api || api->bcast_bytes(buf, len, root) == 0;
}

void cli_mpi_raise_stop(void)
{
    if (api)
        api->raise_flag();
}

bool cli_mpi_stop_raised(void)
{
    return api && api->flag_raised();
}

static int saved_stderr = -1;
static FILE *held;

void cli_mpi_quiet_begin(void)
{
    if (!cli_mpi.active || cli_mpi.size < 2 || cli_mpi.rank == 0)
        return;
    fflush(stderr);
    held = tmpfile();
    if (!held)
        return;
    saved_stderr = dup(STDERR_FILENO);
    if (saved_stderr < 0 || dup2(fileno(held), STDERR_FILENO) < 0) {
        fclose(held);
        held = NULL;
    }
}

int cli_mpi_quiet_end(const char *cmd, int rc)
{
    if (held) {
        fflush(stderr);
        dup2(saved_stderr, STDERR_FILENO);
        close(saved_stderr);
        saved_stderr = -1;
    }
    int all = cli_mpi.active ? cli_mpi_agree(rc) : rc;
    if (cli_mpi.active && cli_mpi.size > 1) {
        uint64_t first = rc != 0 ? (uint64_t)cli_mpi.rank : (uint64_t)cli_mpi.size;
        cli_mpi_min_u64(&first, 1);
        if (held && first == (uint64_t)cli_mpi.rank && first != 0) {
            /* Rank 0 had nothing to say: this rank's words are the news. */
            char line[4096];
            rewind(held);
            while (fgets(line, sizeof line, held))
                fprintf(stderr, "sebt %s: rank %d of %d: %s", cmd, cli_mpi.rank, cli_mpi.size, line);
        }
    }
    if (held) {
        fclose(held);
        held = NULL;
    }
    return all;
}

const char *cli_mpi_cmd(const char *cmd)
{
    static char buf[128];
    if (!cli_mpi.active || cli_mpi.size < 2)
        return cmd;
    snprintf(buf, sizeof buf, "%s (rank %d of %d)", cmd, cli_mpi.rank, cli_mpi.size);
    return buf;
}
