/* `sebt fuzz` on MPI ranks (cli/fuzz_mpi.h): each rank fuzzes its own
 * stream of the seed with shrinking and saving off; the first divergence
 * stops every rank; the rank that found the earliest is the only one to
 * shrink and save it, and rank 0 reports it once; the summary counts every
 * rank's cases. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_mpi.h"
#include "mpi.h"

bool cli_fuzz_should_stop(void *user)
{
    (void)user;
    return cli_mpi_stop_raised();
}

void cli_fuzz_rank_share(uint64_t iterations, uint64_t *mine)
{
    uint64_t n = (uint64_t)cli_mpi.size, r = (uint64_t)cli_mpi.rank;
    *mine = iterations ? iterations / n + (r < iterations % n ? 1 : 0) : 0;
}

/* The report travels as its plain fields, then the reproducer's bars and
 * combos (the pointers are rebuilt on arrival). */
static unsigned char *pack_report(const sebt_fuzz_report *r, size_t *len)
{
    size_t n = r->repro.n, nc = r->repro_n_combos;
    size_t bytes = sizeof *r + n * (sizeof(int64_t) + 5 * sizeof(double)) + nc * sizeof(sebt_params);
    unsigned char *buf = malloc(bytes), *p = buf;
    if (!buf)
        return NULL;
    memcpy(p, r, sizeof *r);
    p += sizeof *r;
    if (n) {
        memcpy(p, r->repro.ts, n * sizeof(int64_t));
        p += n * sizeof(int64_t);
        const double *cols[5] = { r->repro.open, r->repro.high, r->repro.low, r->repro.close, r->repro.volume };
        for (int c = 0; c < 5; c++) {
            memcpy(p, cols[c], n * sizeof(double));
            p += n * sizeof(double);
        }
    }
    if (nc)
        memcpy(p, r->repro_combos, nc * sizeof(sebt_params));
    *len = bytes;
    return buf;
}

static bool unpack_report(const unsigned char *buf, size_t len, sebt_fuzz_report *out)
{
    sebt_fuzz_report r;
    if (len < sizeof r)
        return false;
    memcpy(&r, buf, sizeof r);
    const unsigned char *p = buf + sizeof r;
    size_t n = r.repro.n, nc = r.repro_n_combos;
    if (len != sizeof r + n * (sizeof(int64_t) + 5 * sizeof(double)) + nc * sizeof(sebt_params))
        return false;
    sebt_series s = { 0 };
    if (sebt_series_alloc(&s, n, NULL) != SEBT_OK)
        return false;
    s.n_missing = r.repro.n_missing;
    s.n_rejected = r.repro.n_rejected;
    s.n_gap_filled = r.repro.n_gap_filled;
    s.interval_ms = r.repro.interval_ms;
    if (n) {
        memcpy(s.ts, p, n * sizeof(int64_t));
        p += n * sizeof(int64_t);
        double *cols[5] = { s.open, s.high, s.low, s.close, s.volume };
        for (int c = 0; c < 5; c++) {
            memcpy(cols[c], p, n * sizeof(double));
            p += n * sizeof(double);
        }
    }
    sebt_params *combos = NULL;
    if (nc) {
        combos = malloc(nc * sizeof *combos);
        if (!combos) {
            sebt_series_free(&s);
            return false;
        }
        memcpy(combos, p, nc * sizeof *combos);
    }
    r.repro = s;
    r.repro_combos = combos;
    /* The case before it stays on its rank (its pointers mean nothing here). */
    r.n_previous = r.n_needed = 0;
    r.after_previous = false;
    *out = r;
    return true;
}

int cli_fuzz_combine(const char *cmd, const sebt_backend *b, const sebt_fuzz_opts *finish, sebt_fuzz_report *r,
                     cli_fuzz_ranks *ranks)
{
    memset(ranks, 0, sizeof *ranks);
    ranks->size = cli_mpi.size;
    ranks->winner = -1;
    if (r->found)
        cli_mpi_raise_stop();
    /* Totals. */
    uint64_t sums[9] = { r->cases_run, r->combos_checked, r->ties, r->decisions, r->paths.big_cases,
                         r->paths.multi_thread_cases, r->paths.multi_batch_cases,
                         r->paths.multi_block_cases, r->paths.stats_reported ? 1 : 0 };
    uint64_t maxes[7] = { (uint64_t)(r->seconds * 1e6), (uint64_t)r->paths.max_threads, r->paths.max_batches,
                          r->paths.max_blocks, r->paths.max_chunks, r->paths.max_bars, r->paths.max_combos };
    /* The winner: the earliest divergence (then the lowest rank). */
    uint64_t key = r->found ? ((uint64_t)(r->seconds_to_find * 1e6) << 16) | (uint64_t)cli_mpi.rank : UINT64_MAX;
    uint64_t mine_cases = r->cases_run;
    if (!cli_mpi_sum_u64(sums, 9) || !cli_mpi_max_u64(maxes, 7) || !cli_mpi_min_u64(&key, 1)) {
        fprintf(stderr, "sebt %s: error: combining the ranks' results failed\n", cmd);
        return CLI_EXIT_CHECK_FAILED;
    }
    void *all_cases = NULL;
    uint64_t got = 0;
    if (!cli_mpi_gather(&mine_cases, sizeof mine_cases, &all_cases, &got)) {
        fprintf(stderr, "sebt %s: error: combining the ranks' results failed\n", cmd);
        return CLI_EXIT_CHECK_FAILED;
    }
    ranks->cases = all_cases;
    int winner = key == UINT64_MAX ? -1 : (int)(key & 0xffff);
    ranks->winner = winner;
    /* The winner alone shrinks and saves its case, then its report goes
     * to rank 0. */
    if (winner == cli_mpi.rank) {
        sebt_error err = { 0 };
        if (sebt_fuzz_finish(b, finish, r, &err) != SEBT_OK) {
            cli_report_error(cli_mpi_cmd(cmd), &err);
            cli_mpi_abort(CLI_EXIT_CHECK_FAILED);
        }
    }
    if (winner > 0) {
        size_t len = 0;
        unsigned char *buf = NULL;
        if (cli_mpi.rank == winner && !(buf = pack_report(r, &len))) {
            fprintf(stderr, "sebt %s: error: out of memory for the report\n", cmd);
            cli_mpi_abort(CLI_EXIT_NOMEM);
        }
        void *in = NULL;
        uint64_t in_len = 0;
        bool ok = cli_mpi_gather(buf, len, &in, &in_len);
        free(buf);
        if (ok && cli_mpi.rank == 0) {
            sebt_fuzz_report w;
            ok = unpack_report(in, (size_t)in_len, &w);
            if (ok) {
                sebt_fuzz_report_free(r);
                *r = w;
            }
        }
        free(in);
        if (!ok) {
            fprintf(stderr, "sebt %s: error: the divergence found by rank %d did not reach rank 0\n", cmd, winner);
            return CLI_EXIT_CHECK_FAILED;
        }
    }
    r->cases_run = sums[0];
    r->combos_checked = (size_t)sums[1];
    r->ties = (size_t)sums[2];
    r->decisions = sums[3];
    r->paths.big_cases = sums[4];
    r->paths.multi_thread_cases = sums[5];
    r->paths.multi_batch_cases = sums[6];
    r->paths.multi_block_cases = sums[7];
    r->paths.stats_reported = sums[8] != 0;
    r->seconds = (double)maxes[0] * 1e-6;
    r->paths.max_threads = (int)maxes[1];
    r->paths.max_batches = (size_t)maxes[2];
    r->paths.max_blocks = (size_t)maxes[3];
    r->paths.max_chunks = (size_t)maxes[4];
    r->paths.max_bars = (size_t)maxes[5];
    r->paths.max_combos = (size_t)maxes[6];
    return CLI_EXIT_OK;
}
