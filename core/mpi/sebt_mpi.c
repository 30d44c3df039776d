/* libsebt_mpi.so: the only code of sebt that links MPI (sebt_mpi_api.h).
 * Big messages travel in pieces of at most 1 GiB: MPI counts are int. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "sebt_mpi_api.h"

#define PIECE ((uint64_t)1 << 30)
#define TAG_GATHER 101
#define TAG_STOP 102

static int g_rank, g_size;
static uint64_t g_raised, g_stops_seen;
static MPI_Request *g_stop_reqs;
static int g_n_stop_reqs;
static char g_stop_byte = 1, g_stop_sink;

static int m_init(int *rank, int *size, int *local_rank, int *local_size, char *msg, size_t msg_size)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited && MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        if (msg && msg_size)
            strncpy(msg, "MPI_Init failed", msg_size - 1);
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, local_rank);
    MPI_Comm_size(node, local_size);
    MPI_Comm_free(&node);
    *rank = g_rank;
    *size = g_size;
    return 0;
}

/* Stop messages still in flight are received before MPI_Finalize: every
 * rank learns how many were raised in all and takes its share. */
static int settle_stops(void)
{
    uint64_t total = g_raised;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    uint64_t expect = total - g_raised;
    while (g_stops_seen < expect) {
        MPI_Recv(&g_stop_sink, 1, MPI_CHAR, MPI_ANY_SOURCE, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        g_stops_seen++;
    }
    if (g_n_stop_reqs)
        MPI_Waitall(g_n_stop_reqs, g_stop_reqs, MPI_STATUSES_IGNORE);
    free(g_stop_reqs);
    g_stop_reqs = NULL;
    g_n_stop_reqs = 0;
    return 0;
}

static int m_finalize(void)
{
    settle_stops();
    return MPI_Finalize() != MPI_SUCCESS;
}

static void m_abort(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
    abort();
}

static int m_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS; }

static int m_allreduce_u64(uint64_t *v, int n, int op)
{
    MPI_Op o = op == SEBT_MPI_MAX ? MPI_MAX : op == SEBT_MPI_MIN ? MPI_MIN : MPI_SUM;
    return MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT64_T, o, MPI_COMM_WORLD) != MPI_SUCCESS;
}

static int send_pieces(const char *p, uint64_t len, int to)
{
    for (uint64_t at = 0; at < len; at += PIECE) {
        int n = (int)(len - at < PIECE ? len - at : PIECE);
        if (MPI_Send(p + at, n, MPI_BYTE, to, TAG_GATHER, MPI_COMM_WORLD) != MPI_SUCCESS)
            return 1;
    }
    return 0;
}

static int recv_pieces(char *p, uint64_t len, int from)
{
    for (uint64_t at = 0; at < len; at += PIECE) {
        int n = (int)(len - at < PIECE ? len - at : PIECE);
        if (MPI_Recv(p + at, n, MPI_BYTE, from, TAG_GATHER, MPI_COMM_WORLD, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return 1;
    }
    return 0;
}

static int m_gather_bytes(const void *buf, uint64_t len, void **out, uint64_t *out_len)
{
    uint64_t *lens = g_rank == 0 ? calloc((size_t)g_size, sizeof *lens) : NULL;
    if (g_rank == 0 && !lens)
        return 1;
    if (MPI_Gather(&len, 1, MPI_UINT64_T, lens, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD) != MPI_SUCCESS) {
        free(lens);
        return 1;
    }
    if (g_rank != 0) {
        if (out)
            *out = NULL;
        if (out_len)
            *out_len = 0;
        return send_pieces(buf, len, 0);
    }
    uint64_t total = 0;
    for (int r = 0; r < g_size; r++)
        total += lens[r];
    char *all = malloc(total ? (size_t)total : 1);
    if (!all) {
        free(lens);
        return 1;
    }
    uint64_t at = 0;
    int bad = 0;
    for (int r = 0; r < g_size && !bad; r++) {
        if (r == 0)
            memcpy(all, buf, (size_t)len);
        else
            bad = recv_pieces(all + at, lens[r], r);
        at += lens[r];
    }
    free(lens);
    if (bad) {
        free(all);
        return 1;
    }
    *out = all;
    *out_len = total;
    return 0;
}

static int m_bcast_bytes(void *buf, uint64_t len, int root)
{
    char *p = buf;
    for (uint64_t at = 0; at < len; at += PIECE) {
        int n = (int)(len - at < PIECE ? len - at : PIECE);
        if (MPI_Bcast(p + at, n, MPI_BYTE, root, MPI_COMM_WORLD) != MPI_SUCCESS)
            return 1;
    }
    return 0;
}

static int m_raise_flag(void)
{
    if (g_raised)
        return 0;
    g_stop_reqs = calloc((size_t)g_size, sizeof *g_stop_reqs);
    if (!g_stop_reqs)
        return 1;
    for (int r = 0; r < g_size; r++)
        if (r != g_rank)
            MPI_Isend(&g_stop_byte, 1, MPI_CHAR, r, TAG_STOP, MPI_COMM_WORLD, &g_stop_reqs[g_n_stop_reqs++]);
    g_raised = 1;
    return 0;
}

static int m_flag_raised(void)
{
    if (g_raised || g_stops_seen)
        return 1;
    int got = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_STOP, MPI_COMM_WORLD, &got, MPI_STATUS_IGNORE);
    if (got) {
        MPI_Recv(&g_stop_sink, 1, MPI_CHAR, MPI_ANY_SOURCE, TAG_STOP, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        g_stops_seen++;
    }
    return got;
}

static const char *m_library_version(void)
{
    static char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    char *nl = strchr(v, '\n');
    if (nl)
        *nl = '\0';
    return v;
}

static const sebt_mpi_api api = {
    .abi = SEBT_MPI_ABI,
    .init = m_init,
    .finalize = m_finalize,
    .abort = m_abort,
    .barrier = m_barrier,
    .allreduce_u64 = m_allreduce_u64,
    .gather_bytes = m_gather_bytes,
    .bcast_bytes = m_bcast_bytes,
    .raise_flag = m_raise_flag,
    .flag_raised = m_flag_raised,
    .library_version = m_library_version,
};

__attribute__((visibility("default"))) const sebt_mpi_api *sebt_mpi_module(void);
const sebt_mpi_api *sebt_mpi_module(void) { return &api; }
