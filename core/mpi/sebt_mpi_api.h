/* The table libsebt_mpi.so hands to the `sebt` command (cli/mpi.c).
 * The module is the only code that links MPI; the command opens it with
 * dlopen when a launcher started it, so a plain run never maps MPI.
 * Every function returns 0 on success; MPI's default error handler still
 * aborts the whole job on a communication failure, so nothing hangs. */
#ifndef SEBT_MPI_API_H
#define SEBT_MPI_API_H

#include <stddef.h>
#include <stdint.h>

#define SEBT_MPI_ABI 1
#define SEBT_MPI_MODULE_SYMBOL "sebt_mpi_module"

enum { SEBT_MPI_SUM = 0, SEBT_MPI_MAX = 1, SEBT_MPI_MIN = 2 };

typedef struct {
    int abi;                       /* SEBT_MPI_ABI */
    int (*init)(int *rank, int *size, int *local_rank, int *local_size, char *msg, size_t msg_size);
    int (*finalize)(void);
    void (*abort)(int code);       /* never returns */
    int (*barrier)(void);
    /* In place over every rank: v[0..n) combined with op. */
    int (*allreduce_u64)(uint64_t *v, int n, int op);
    /* Every rank's len bytes, concatenated in rank order on rank 0 (*out
     * malloc'd there, NULL elsewhere). */
    int (*gather_bytes)(const void *buf, uint64_t len, void **out, uint64_t *out_len);
    /* len bytes from root to every rank. */
    int (*bcast_bytes)(void *buf, uint64_t len, int root);
    /* Non-blocking: has any rank called raise_flag()? (the fuzz loop's
     * "stop, a divergence was found"). */
    int (*raise_flag)(void);
    int (*flag_raised)(void);
    const char *(*library_version)(void);
} sebt_mpi_api;

typedef const sebt_mpi_api *(*sebt_mpi_module_fn)(void);

#endif
