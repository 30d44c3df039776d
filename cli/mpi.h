/* The `sebt` command under an MPI launcher (cli/mpi.c).
 *
 * The same binary runs alone or as one of N ranks: started by mpirun or
 * srun (seen in the environment), an MPI-aware command opens
 * libsebt_mpi.so with dlopen and joins the job; otherwise nothing of MPI is
 * ever loaded. Without a launcher every call here is a one-rank no-op. */
#ifndef SEBT_CLI_MPI_H
#define SEBT_CLI_MPI_H

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    bool active;        /* joined an MPI job (size may still be 1) */
    int rank, size;     /* 0 and 1 without MPI */
    int local_rank, local_size;   /* on this node */
} cli_world;

extern cli_world cli_mpi;

/* Size of the job a launcher started this process in, from its
 * environment (Open MPI, PMIx, MPICH/PMI, Slurm); 0 when none. */
int cli_mpi_launcher_size(void);
/* Joins the job. Prints and returns an exit code when MPI cannot start. */
int cli_mpi_start(const char *cmd);
/* Leaves the job (every rank must call it). */
void cli_mpi_finish(void);
/* Ends the whole job now with this exit code: a failing rank's way out,
 * after it printed its message. */
_Noreturn void cli_mpi_abort(int code);

/* The worst (highest) exit code over every rank; every rank must call it. */
int cli_mpi_agree(int rc);
bool cli_mpi_sum_u64(uint64_t *v, int n);
bool cli_mpi_max_u64(uint64_t *v, int n);
bool cli_mpi_min_u64(uint64_t *v, int n);
bool cli_mpi_gather(const void *buf, uint64_t len, void **out, uint64_t *out_len);
bool cli_mpi_bcast(void *buf, uint64_t len, int root);
void cli_mpi_raise_stop(void);
bool cli_mpi_stop_raised(void);

/* Errors that every rank would print alike (a bad grid, a missing file)
 * are printed once: between quiet_begin and quiet_end, stderr of every
 * rank but 0 goes to a buffer; quiet_end(rc) agrees on the worst exit
 * code and, when rank 0 had nothing to say, lets the lowest failing rank
 * print what it held back, prefixed by its rank. Returns the agreed code. */
void cli_mpi_quiet_begin(void);
int cli_mpi_quiet_end(const char *cmd, int rc);

/* "sweep" alone, or "sweep (rank 2 of 4)" under MPI, for messages. */
const char *cli_mpi_cmd(const char *cmd);

#endif
