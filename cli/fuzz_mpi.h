/* `sebt fuzz` across MPI ranks (cli/fuzz_mpi.c). */
#ifndef SEBT_CLI_FUZZ_MPI_H
#define SEBT_CLI_FUZZ_MPI_H

#include <stdbool.h>
#include <stdint.h>

#include "cli.h"

typedef struct {
    int size;            /* ranks */
    int winner;          /* the rank whose divergence is reported, -1 when none */
    uint64_t *cases;     /* rank 0: cases run by each rank (free it); NULL elsewhere */
} cli_fuzz_ranks;

/* sebt_fuzz_opts.should_stop under MPI: another rank found a divergence. */
bool cli_fuzz_should_stop(void *user);
/* This rank's share of a total case count. */
void cli_fuzz_rank_share(uint64_t iterations, uint64_t *mine);
/* Every rank calls it after its sebt_fuzz_run (run with shrink off and no
 * save_dir): the rank with the earliest divergence finishes it
 * (sebt_fuzz_finish with `finish`: the user's shrink and save_dir); on rank
 * 0, r becomes the job's report (totals over the ranks, the winning
 * divergence with its reproducer). Prints and returns an exit code. */
int cli_fuzz_combine(const char *cmd, const sebt_backend *b, const sebt_fuzz_opts *finish, sebt_fuzz_report *r,
                     cli_fuzz_ranks *ranks);

#endif
