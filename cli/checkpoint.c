/* `sebt sweep --checkpoint DIR`: finished chunks of a sweep on disk, so a
 * killed sweep resumes where it stopped (cli/sweep.h).
 *
 * A chunk file, little-endian:
 *   "SEBTCKPT" | u64 format (1) | char version[16] | u64 data fingerprint |
 *   u64 grid fingerprint | u64 bars | u64 combos | char backend[32] |
 *   u64 records | records (72 bytes each, sebt_sweep_record_pack) |
 *   u64 FNV-1a of every byte before it
 * The checksum catches a damaged file; the fingerprints a foreign one. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../core/le_bytes.h"
#include "sweep.h"

#define CKPT_MAGIC "SEBTCKPT"
#define CKPT_FORMAT 1
#define CKPT_HEADER_BYTES (8 + 8 + 16 + 8 * 4 + 32 + 8)

static void fixed_string(unsigned char *o, size_t size, const char *s)
{
    memset(o, 0, size);
    size_t n = strlen(s);
    memcpy(o, s, n < size - 1 ? n : size - 1);
}

static bool is_chunk_name(const char *name)
{
    size_t n = strlen(name);
    return strncmp(name, "chunk-", 6) == 0 && n > 11 && strcmp(name + n - 5, ".sebt") == 0;
}

static int check_chunk(const char *cmd, const ckpt_id *id, const char *path, const unsigned char *buf,
                       size_t len, ckpt_found_fn found, void *user)
{
    const char *dir = id->dir;
    if (len < CKPT_HEADER_BYTES + 8 || memcmp(buf, CKPT_MAGIC, 8) != 0) {
        fprintf(stderr, "sebt %s: error: --checkpoint %s: %s is not a sebt checkpoint chunk; "
                "use a directory of its own for each sweep\n", cmd, dir, path);
        return CLI_EXIT_USAGE;
    }
    if (get_u64(buf + len - 8) != sebt_fnv1a(0, buf, len - 8)) {
        fprintf(stderr, "sebt %s: error: --checkpoint %s: %s is damaged (checksum mismatch); "
                "delete it and run again to recompute its combos\n", cmd, dir, path);
        return CLI_EXIT_USAGE;
    }
    char version[17], backend[33];
    memcpy(version, buf + 16, 16);
    version[16] = '\0';
    memcpy(backend, buf + 64, 32);
    backend[32] = '\0';
    uint64_t format = get_u64(buf + 8), data_fp = get_u64(buf + 32), grid_fp = get_u64(buf + 40),
             bars = get_u64(buf + 48), combos = get_u64(buf + 56), n_rec = get_u64(buf + 96);
    const char *what = NULL;
    char detail[200] = "";
    if (format != CKPT_FORMAT || strcmp(version, SEBT_VERSION) != 0) {
        what = "another version of sebt";
        snprintf(detail, sizeof detail, "sebt %s, chunk format %llu; this is sebt %s, format %d", version,
                 (unsigned long long)format, SEBT_VERSION, CKPT_FORMAT);
    } else if (data_fp != id->data_fp || bars != id->bars) {
        what = "other data";
        snprintf(detail, sizeof detail, "%llu bars, fingerprint %016llx; this run: %llu bars, %016llx",
                 (unsigned long long)bars, (unsigned long long)data_fp, (unsigned long long)id->bars,
                 (unsigned long long)id->data_fp);
    } else if (grid_fp != id->grid_fp || combos != id->n_combos) {
        what = "another grid";
        snprintf(detail, sizeof detail, "%llu combos, fingerprint %016llx; this run: %llu combos, %016llx",
                 (unsigned long long)combos, (unsigned long long)grid_fp, (unsigned long long)id->n_combos,
                 (unsigned long long)id->grid_fp);
    } else if (strcmp(backend, id->backend) != 0) {
        what = "another backend";
        snprintf(detail, sizeof detail, "%s; this run: %s", backend, id->backend);
    }
    if (what) {
        fprintf(stderr, "sebt %s: error: --checkpoint %s holds a chunk of a sweep of %s (%s: %s); "
                "resume with the same data, grid, backend and sebt, or use a new directory\n", cmd, dir,
                what, path, detail);
        return CLI_EXIT_USAGE;
    }
    if (n_rec != (len - CKPT_HEADER_BYTES - 8) / SEBT_SWEEP_RECORD_BYTES ||
        (len - CKPT_HEADER_BYTES - 8) % SEBT_SWEEP_RECORD_BYTES != 0) {
        fprintf(stderr, "sebt %s: error: --checkpoint %s: %s is damaged (its size does not match its "
                "record count)\n", cmd, dir, path);
        return CLI_EXIT_USAGE;
    }
    for (uint64_t k = 0; k < n_rec; k++) {
        sebt_sweep_record r;
        sebt_sweep_record_unpack(buf + CKPT_HEADER_BYTES + k * SEBT_SWEEP_RECORD_BYTES, &r);
        if (r.combo >= id->n_combos || r.open_at_end > 1) {
            fprintf(stderr, "sebt %s: error: --checkpoint %s: %s is damaged (record %llu names combo %llu "
                    "of %llu)\n", cmd, dir, path, (unsigned long long)k, (unsigned long long)r.combo,
                    (unsigned long long)id->n_combos);
            return CLI_EXIT_USAGE;
        }
        found(user, &r);
    }
    return CLI_EXIT_OK;
}

int ckpt_load(const char *cmd, const ckpt_id *id, ckpt_found_fn found, void *user, size_t *n_chunks)
{
    *n_chunks = 0;
    if (mkdir(id->dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "sebt %s: error: cannot create --checkpoint directory %s: %s\n", cmd, id->dir,
                strerror(errno));
        return CLI_EXIT_USAGE;
    }
    DIR *d = opendir(id->dir);
    if (!d) {
        fprintf(stderr, "sebt %s: error: cannot read --checkpoint directory %s: %s\n", cmd, id->dir,
                strerror(errno));
        return CLI_EXIT_USAGE;
    }
    int rc = CLI_EXIT_OK;
    struct dirent *e;
    while (rc == CLI_EXIT_OK && (e = readdir(d)) != NULL) {
        /* Temporary files of a killed run never became chunks: skipped. */
        if (!is_chunk_name(e->d_name))
            continue;
        char path[8192];
        snprintf(path, sizeof path, "%s/%s", id->dir, e->d_name);
        char *text = NULL;
        size_t len = 0;
        sebt_error err = { 0 };
        if (sebt_read_file(path, &text, &len, &err) != SEBT_OK) {
            rc = cli_report_error(cmd, &err);
            break;
        }
        rc = check_chunk(cmd, id, path, (const unsigned char *)text, len, found, user);
        free(text);
        if (rc == CLI_EXIT_OK)
            (*n_chunks)++;
    }
    closedir(d);
    return rc;
}

int ckpt_write(const char *cmd, const ckpt_id *id, const sebt_sweep_record *recs, size_t n, unsigned tag)
{
    if (n == 0)
        return CLI_EXIT_OK;
    size_t len = CKPT_HEADER_BYTES + n * SEBT_SWEEP_RECORD_BYTES + 8;
    unsigned char *buf = calloc(1, len);
    if (!buf) {
        fprintf(stderr, "sebt %s: error: out of memory for a checkpoint chunk of %zu combos\n", cmd, n);
        return CLI_EXIT_NOMEM;
    }
    memcpy(buf, CKPT_MAGIC, 8);
    put_u64(buf + 8, CKPT_FORMAT);
    fixed_string(buf + 16, 16, SEBT_VERSION);
    put_u64(buf + 32, id->data_fp);
    put_u64(buf + 40, id->grid_fp);
    put_u64(buf + 48, id->bars);
    put_u64(buf + 56, id->n_combos);
    fixed_string(buf + 64, 32, id->backend);
    put_u64(buf + 96, (uint64_t)n);
    for (size_t k = 0; k < n; k++)
        sebt_sweep_record_pack(&recs[k], buf + CKPT_HEADER_BYTES + k * SEBT_SWEEP_RECORD_BYTES);
    put_u64(buf + len - 8, sebt_fnv1a(0, buf, len - 8));

    /* The first combo and count name the chunk; the tag, process and time
     * keep two writers (ranks, or a rerun) from ever picking one name. */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char path[8192];
    snprintf(path, sizeof path, "%s/chunk-%llu-%zu-%u-%ld-%lx.sebt", id->dir, (unsigned long long)recs[0].combo,
             n, tag, (long)getpid(), (unsigned long)ts.tv_nsec ^ (unsigned long)ts.tv_sec);
    atomic_file af;
    char why[600];
    int rc = atomic_open(&af, path, why, sizeof why);
    if (rc == CLI_EXIT_OK) {
        fwrite(buf, 1, len, af.f);
        if (!atomic_commit(&af, why, sizeof why))
            rc = CLI_EXIT_USAGE;
    }
    if (rc != CLI_EXIT_OK)
        fprintf(stderr, "sebt %s: error: --checkpoint %s: %s\n", cmd, id->dir, why);
    free(buf);
    return rc;
}
