/* The series cache (core/series_cache.c): a cached load gives the same
 * series, bit for bit, as a parse; anything that changes the parse (the
 * bytes, the options) misses; a damaged, cut or foreign entry is never
 * used; a folder that cannot be written costs time only; the folder keeps
 * its newest entries. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "scratch_dir.h"
#include "sebt/sebt.h"

#define DATA SEBT_FIXTURES_DIR "/data/BTCUSDT-1m-2019-01.csv.gz"
#define SMALL SEBT_FIXTURES_DIR "/data/BTCUSDT-1m-2018-02-08.raw.csv"

SEBT_SCRATCH_SUITE(series_cache, "series_cache");

static void need_cache(void)
{
    if (!sebt_series_cache_available())
        cr_skip_test("this build has no series cache (xxhash not found, or no build ID)");
}

static void same_series(const sebt_series *a, const sebt_series *b)
{
    cr_assert_eq(a->n, b->n);
    cr_assert(memcmp(a->ts, b->ts, a->n * sizeof *a->ts) == 0, "ts differ");
    cr_assert(memcmp(a->open, b->open, a->n * sizeof(double)) == 0, "open differs");
    cr_assert(memcmp(a->high, b->high, a->n * sizeof(double)) == 0, "high differs");
    cr_assert(memcmp(a->low, b->low, a->n * sizeof(double)) == 0, "low differs");
    cr_assert(memcmp(a->close, b->close, a->n * sizeof(double)) == 0, "close differs");
    cr_assert(memcmp(a->volume, b->volume, a->n * sizeof(double)) == 0, "volume differs");
    cr_assert_eq(a->n_missing, b->n_missing);
    cr_assert_eq(a->n_rejected, b->n_rejected);
    cr_assert_eq(a->n_gap_filled, b->n_gap_filled);
    cr_assert_eq(a->interval_ms, b->interval_ms);
}

static sebt_cache_use load(const char *path, const sebt_load_opts *o, const char *cache, sebt_series *s)
{
    sebt_error e = { 0 };
    sebt_cache_use use = (sebt_cache_use)-1;
    cr_assert_eq(sebt_load_csv_cached(path, o, cache, s, &use, &e), SEBT_OK, "%s", e.msg);
    return use;
}

static sebt_series parsed(const char *path, const sebt_load_opts *o)
{
    sebt_series s;
    sebt_error e = { 0 };
    cr_assert_eq(sebt_load_csv(path, o, &s, &e), SEBT_OK, "%s", e.msg);
    return s;
}

/* The one entry in the folder (the tests make one at a time). */
static void only_entry(const char *cache, char *path, size_t size)
{
    DIR *d = opendir(cache);
    cr_assert_not_null(d);
    struct dirent *e;
    int found = 0;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".series")) {
            snprintf(path, size, "%s/%s", cache, e->d_name);
            found++;
        }
    closedir(d);
    cr_assert_eq(found, 1, "expected one entry in %s, found %d", cache, found);
}

static size_t count_entries(const char *cache)
{
    DIR *d = opendir(cache);
    cr_assert_not_null(d);
    struct dirent *e;
    size_t n = 0;
    while ((e = readdir(d)))
        n += strstr(e->d_name, ".series") != NULL && e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void copy_file(const char *from, const char *to)
{
    char *data;
    size_t len;
    cr_assert_eq(sebt_read_file(from, &data, &len, NULL), SEBT_OK);
    FILE *f = fopen(to, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
    free(data);
}

Test(series_cache, a_second_load_reads_the_entry_and_gives_the_same_bits)
{
    need_cache();
    char cache[300];
    snprintf(cache, sizeof cache, "%s/a/b", dir);   /* folders made as needed */
    sebt_series want = parsed(DATA, NULL), s1, s2;
    cr_assert_eq(load(DATA, NULL, cache, &s1), SEBT_CACHE_STORED);
    cr_assert_eq(load(DATA, NULL, cache, &s2), SEBT_CACHE_HIT);
    same_series(&s1, &want);
    same_series(&s2, &want);
    /* A copy of the file under another name is the same bytes: a hit. */
    char copy[300];
    snprintf(copy, sizeof copy, "%s/copy.csv.gz", dir);
    copy_file(DATA, copy);
    sebt_series s3;
    cr_assert_eq(load(copy, NULL, cache, &s3), SEBT_CACHE_HIT);
    same_series(&s3, &want);
    struct stat st;
    cr_assert_eq(stat(cache, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0700, "the folder is the user's alone");
    sebt_series_free(&want);
    sebt_series_free(&s1);
    sebt_series_free(&s2);
    sebt_series_free(&s3);
}

Test(series_cache, other_options_or_other_bytes_miss)
{
    need_cache();
    const sebt_load_opts fill = { .fill_gaps = true };
    sebt_series plain, filled, a, b;
    cr_assert_eq(load(DATA, NULL, dir, &plain), SEBT_CACHE_STORED);
    cr_assert_eq(load(DATA, &fill, dir, &filled), SEBT_CACHE_STORED);
    cr_assert_eq(load(DATA, &fill, dir, &a), SEBT_CACHE_HIT);
    sebt_series want = parsed(DATA, &fill);
    same_series(&a, &want);
    cr_assert_eq(count_entries(dir), 2);

    /* One digit changed in a price: the same size, other bytes. A cache
     * keyed by name, size or time would hand back the old series. */
    char text[300], edited[300];
    snprintf(text, sizeof text, "%s/text.csv", dir);
    snprintf(edited, sizeof edited, "%s/edited.csv", dir);
    sebt_series_free(&want);
    want = parsed(DATA, NULL);
    FILE *f = fopen(text, "w");
    cr_assert_not_null(f);
    cr_assert_eq(sebt_write_csv(&want, f, NULL), SEBT_OK);
    fclose(f);
    cr_assert_eq(load(text, NULL, dir, &b), SEBT_CACHE_STORED);
    same_series(&b, &want);
    char *data;
    size_t len;
    cr_assert_eq(sebt_read_file(text, &data, &len, NULL), SEBT_OK);
    char *last = strchr(strchr(data, '\n') + 1, '\n') - 1;   /* row 1's volume, last digit */
    cr_assert(*last >= '1' && *last <= '8', "'%c'", *last);
    (*last)++;
    f = fopen(edited, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(data, 1, len, f), len);
    fclose(f);
    free(data);
    sebt_series e1, e2;
    cr_assert_eq(load(edited, NULL, dir, &e1), SEBT_CACHE_STORED);
    cr_assert_neq(e1.volume[0], want.volume[0]);
    sebt_series e_want = parsed(edited, NULL);
    same_series(&e1, &e_want);
    cr_assert_eq(load(edited, NULL, dir, &e2), SEBT_CACHE_HIT);
    same_series(&e2, &e_want);
    sebt_series *all[] = { &plain, &filled, &a, &b, &want, &e1, &e2, &e_want };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        sebt_series_free(all[i]);
}

/* Every kind of damage: a flipped bit in the values, a cut, bytes added,
 * another file's entry under this name, an empty file. Each is parsed
 * again and replaced, never used; then the repaired entry hits. */
Test(series_cache, a_damaged_entry_is_parsed_again_and_replaced)
{
    need_cache();
    sebt_series want = parsed(DATA, NULL), s;
    cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_STORED);
    sebt_series_free(&s);
    char entry[600], other_cache[300], other_entry[600];
    only_entry(dir, entry, sizeof entry);
    snprintf(other_cache, sizeof other_cache, "%s/other", dir);
    cr_assert_eq(load(SEBT_FIXTURES_DIR "/data/BTCUSDT-15m-2017-2021.csv.gz", NULL, other_cache, &s),
                 SEBT_CACHE_STORED);
    sebt_series_free(&s);
    only_entry(other_cache, other_entry, sizeof other_entry);
    struct stat st;
    cr_assert_eq(stat(entry, &st), 0);
    for (int damage = 0; damage < 6; damage++) {
        if (damage == 0 || damage == 1) {
            /* a bit in the middle of the values, or in the header's bar count */
            int fd = open(entry, O_RDWR);
            cr_assert_geq(fd, 0);
            off_t at = damage == 0 ? st.st_size / 2 : 50;
            unsigned char c;
            cr_assert_eq(pread(fd, &c, 1, at), 1);
            c ^= 0x10;
            cr_assert_eq(pwrite(fd, &c, 1, at), 1);
            close(fd);
        } else if (damage == 2) {
            cr_assert_eq(truncate(entry, st.st_size - 8), 0);
        } else if (damage == 3) {
            FILE *f = fopen(entry, "ab");
            fputs("more", f);
            fclose(f);
        } else if (damage == 4) {
            copy_file(other_entry, entry);
        } else {
            cr_assert_eq(truncate(entry, 0), 0);
        }
        cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_REPLACED, "damage %d", damage);
        same_series(&s, &want);
        sebt_series_free(&s);
        cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_HIT, "damage %d", damage);
        same_series(&s, &want);
        sebt_series_free(&s);
    }
    sebt_series_free(&want);
}

/* What is not a regular file of this user, in an entry's place, is never
 * opened for reading nor trusted, and is replaced: a FIFO (which blocked
 * open() for good), a link to a good entry, another user's copy of the
 * good entry (as root: a shared folder), a device (where it can be made). */
Test(series_cache, an_entry_that_is_not_this_users_regular_file_is_refused_and_replaced, .timeout = 60)
{
    need_cache();
    sebt_series want = parsed(DATA, NULL), s;
    cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_STORED);
    sebt_series_free(&s);
    char entry[600], good[700];
    only_entry(dir, entry, sizeof entry);
    snprintf(good, sizeof good, "%s/good.copy", dir);
    copy_file(entry, good);
    for (int kind = 0; kind < 4; kind++) {
        cr_assert_eq(unlink(entry), 0);
        if (kind == 0) {
            cr_assert_eq(mkfifo(entry, 0600), 0);
        } else if (kind == 1) {
            cr_assert_eq(symlink(good, entry), 0);
        } else if (kind == 2) {
            copy_file(good, entry);
            if (geteuid() != 0 || chown(entry, 65534, 65534) != 0) {
                cr_log_info("another user's entry: not checked (needs root)");
                continue;
            }
        } else if (mknod(entry, S_IFCHR | 0600, makedev(1, 3)) != 0) {
            cr_log_info("a device in place of an entry: not checked (mknod refused)");
            copy_file(good, entry);
            continue;
        }
        cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_UNTRUSTED_REPLACED, "kind %d", kind);
        same_series(&s, &want);
        sebt_series_free(&s);
        struct stat st;
        cr_assert_eq(lstat(entry, &st), 0);
        cr_assert(S_ISREG(st.st_mode) && st.st_uid == geteuid(), "kind %d: not replaced", kind);
        cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_HIT, "kind %d", kind);
        same_series(&s, &want);
        sebt_series_free(&s);
    }
    sebt_series_free(&want);
}

Test(series_cache, a_folder_that_cannot_be_written_costs_time_only)
{
    need_cache();
    char blocked[300];
    snprintf(blocked, sizeof blocked, "%s/file", dir);
    FILE *f = fopen(blocked, "w");   /* a file where the folder would go */
    fclose(f);
    strcat(blocked, "/cache");
    sebt_series want = parsed(DATA, NULL), s;
    cr_assert_eq(load(DATA, NULL, blocked, &s), SEBT_CACHE_NOT_STORED);
    same_series(&s, &want);
    sebt_series_free(&s);
    cr_assert_eq(load(DATA, NULL, NULL, &s), SEBT_CACHE_OFF);
    same_series(&s, &want);
    sebt_series_free(&s);
    cr_assert_eq(load(DATA, NULL, "", &s), SEBT_CACHE_OFF);
    sebt_series_free(&s);
    sebt_series_free(&want);
}

Test(series_cache, small_files_and_errors_are_not_kept)
{
    need_cache();
    sebt_series s, want = parsed(SMALL, NULL);
    cr_assert_eq(load(SMALL, NULL, dir, &s), SEBT_CACHE_SMALL);
    same_series(&s, &want);
    sebt_series_free(&s);
    sebt_series_free(&want);
    cr_assert_eq(count_entries(dir), 0);
    /* A file that fails to load fails the same way, and leaves nothing. */
    sebt_error e1 = { 0 }, e2 = { 0 };
    const char *bad = SEBT_FIXTURES_DIR "/loader/truncated.csv.gz";
    cr_assert_eq(sebt_load_csv(bad, NULL, &s, &e1), SEBT_ERR_INPUT);
    cr_assert_eq(sebt_load_csv_cached(bad, NULL, dir, &s, NULL, &e2), SEBT_ERR_INPUT);
    cr_assert_str_eq(e1.msg, e2.msg);
    cr_assert_eq(sebt_load_csv_cached(SEBT_FIXTURES_DIR "/loader/no_such_file.csv", NULL, dir, &s, NULL, &e2),
                 SEBT_ERR_IO);
    cr_assert_eq(count_entries(dir), 0);
}

/* 16 entries stay, the least recently used go; a temporary file a killed
 * store left behind an hour ago is removed, a fresh one (a store under
 * way in another process) is not. */
Test(series_cache, the_folder_keeps_its_newest_entries)
{
    need_cache();
    char path[400];
    for (int i = 0; i < 20; i++) {
        snprintf(path, sizeof path, "%s/%032x.series", dir, i);
        FILE *f = fopen(path, "w");
        fclose(f);
        struct timespec t[2] = { { .tv_sec = 1000000 + i }, { .tv_sec = 1000000 + i } };
        cr_assert_eq(utimensat(AT_FDCWD, path, t, 0), 0);
    }
    char stale[400], fresh[400];
    snprintf(stale, sizeof stale, "%s/.x.series.tmp-1-0", dir);
    snprintf(fresh, sizeof fresh, "%s/.y.series.tmp-2-0", dir);
    fclose(fopen(stale, "w"));
    fclose(fopen(fresh, "w"));
    struct timespec old[2] = { { .tv_sec = 1000 }, { .tv_sec = 1000 } };
    cr_assert_eq(utimensat(AT_FDCWD, stale, old, 0), 0);
    sebt_series s;
    cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_STORED);
    sebt_series_free(&s);
    cr_assert_eq(count_entries(dir), 16);
    for (int i = 0; i < 20; i++) {
        snprintf(path, sizeof path, "%s/%032x.series", dir, i);
        /* the 5 oldest of the 20 made way for the new one */
        cr_assert_eq(access(path, F_OK) == 0, i >= 5, "entry %d", i);
    }
    cr_assert_neq(access(stale, F_OK), 0, "a stale temporary file is removed");
    cr_assert_eq(access(fresh, F_OK), 0, "a store under way is left alone");
    cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_HIT);
    sebt_series_free(&s);
}

/* An entry that is a link (planted, or left by another tool) is not read
 * and not written through: the store replaces the link, and the file it
 * pointed to is untouched. */
Test(series_cache, a_link_in_place_of_an_entry_is_not_followed)
{
    need_cache();
    char cache[300], entry[600], victim[300];
    snprintf(cache, sizeof cache, "%s/c", dir);
    snprintf(victim, sizeof victim, "%s/victim", dir);
    sebt_series s, want = parsed(DATA, NULL);
    cr_assert_eq(load(DATA, NULL, cache, &s), SEBT_CACHE_STORED);
    sebt_series_free(&s);
    only_entry(cache, entry, sizeof entry);
    copy_file(entry, victim);   /* a valid entry's bytes, even */
    FILE *f = fopen(victim, "ab");
    fputs("victim", f);
    fclose(f);
    struct stat before;
    cr_assert_eq(stat(victim, &before), 0);
    cr_assert_eq(unlink(entry), 0);
    cr_assert_eq(symlink(victim, entry), 0);
    cr_assert_eq(load(DATA, NULL, cache, &s), SEBT_CACHE_UNTRUSTED_REPLACED);
    same_series(&s, &want);
    sebt_series_free(&s);
    struct stat after, link;
    cr_assert_eq(stat(victim, &after), 0);
    cr_assert_eq(after.st_size, before.st_size, "the link's target was written");
    cr_assert_eq(lstat(entry, &link), 0);
    cr_assert(S_ISREG(link.st_mode), "the entry is a file again");
    cr_assert_eq(load(DATA, NULL, cache, &s), SEBT_CACHE_HIT);
    sebt_series_free(&s);
    sebt_series_free(&want);
}

/* The loader's limits decide whether a file loads: a cached series is
 * never handed out under other limits, and a limit the loader refuses is
 * refused whatever the cache holds (cli_hostile_environment found a hit
 * skipping SEBT_MAX_INFLATE_MB=' -5'). */
Test(series_cache, the_limit_variables_are_part_of_the_key)
{
    need_cache();
    sebt_series s;
    unsetenv("SEBT_MAX_INFLATE_MB");
    cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_STORED);
    sebt_series_free(&s);
    cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_HIT);
    sebt_series_free(&s);
    setenv("SEBT_MAX_INFLATE_MB", " -5", 1);
    sebt_error e = { 0 };
    cr_assert_eq(sebt_load_csv_cached(DATA, NULL, dir, &s, NULL, &e), SEBT_ERR_USAGE);
    cr_assert(strstr(e.msg, "SEBT_MAX_INFLATE_MB=' -5'") != NULL, "%s", e.msg);
    setenv("SEBT_MAX_INFLATE_MB", "1", 1);   /* the month inflates to 2.6 MiB */
    cr_assert_eq(sebt_load_csv_cached(DATA, NULL, dir, &s, NULL, &e), SEBT_ERR_INPUT);
    cr_assert(strstr(e.msg, "inflates past SEBT_MAX_INFLATE_MB=1") != NULL, "%s", e.msg);
    setenv("SEBT_MAX_INFLATE_MB", "100", 1);
    cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_STORED);
    sebt_series_free(&s);
    cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_HIT);
    sebt_series_free(&s);
    unsetenv("SEBT_MAX_INFLATE_MB");
    cr_assert_eq(load(DATA, NULL, dir, &s), SEBT_CACHE_HIT);
    sebt_series_free(&s);
}

/* Whether /proc/self/maps has a mapping of path. */
static bool mapped_now(const char *path)
{
    FILE *f = fopen("/proc/self/maps", "r");
    cr_assert_not_null(f);
    char line[4096];
    bool found = false;
    while (!found && fgets(line, sizeof line, f))
        found = strstr(line, path) != NULL;
    fclose(f);
    return found;
}

/* A hit maps the entry rather than copying it (core/series_cache.c,
 * map_entry): the series is the entry's bytes, writable by its owner
 * without changing the entry (a private mapping), and gone from the
 * address space once freed. More hits at once than the table of mappings
 * holds are copies, with the same bits. */
Test(series_cache, a_hit_maps_the_entry_privately_and_free_unmaps_it)
{
    need_cache();
    sebt_series want = parsed(DATA, NULL), first, hit;
    cr_assert_eq(load(DATA, NULL, dir, &first), SEBT_CACHE_STORED);
    char entry[600];
    only_entry(dir, entry, sizeof entry);
    cr_assert(!mapped_now(entry));
    cr_assert_eq(load(DATA, NULL, dir, &hit), SEBT_CACHE_HIT);
    cr_assert(mapped_now(entry), "a hit maps %s", entry);
    same_series(&hit, &want);
    for (size_t t = 0; t < hit.n; t++) {
        hit.close[t] = -1.0;
        hit.ts[t] = 0;
    }
    sebt_series again;
    cr_assert_eq(load(DATA, NULL, dir, &again), SEBT_CACHE_HIT, "the owner's writes left the entry as it was");
    same_series(&again, &want);
    sebt_series_free(&hit);
    sebt_series_free(&again);
    cr_assert(!mapped_now(entry), "freeing the series unmaps the entry");

    enum { MANY = 80 };   /* more than series.c's table of 64 */
    sebt_series *many = calloc(MANY, sizeof *many);
    cr_assert_not_null(many);
    for (size_t i = 0; i < MANY; i++) {
        cr_assert_eq(load(DATA, NULL, dir, &many[i]), SEBT_CACHE_HIT, "load %zu", i);
        same_series(&many[i], &want);
    }
    for (size_t i = 0; i < MANY; i++)
        sebt_series_free(&many[i]);
    cr_assert(!mapped_now(entry));
    free(many);
    sebt_series_free(&first);
    sebt_series_free(&want);
}
