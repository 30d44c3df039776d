/* Backend selection (cli/select.c): what cpu, gpu and auto mean, and
 * the auto crossover, shared by every command that runs a backend and by
 * `sebt check-gpu`, which shows what each mode would pick. */
#ifndef SEBT_CLI_SELECT_H
#define SEBT_CLI_SELECT_H

#include <stdbool.h>
#include <stddef.h>

#include "sebt/gpu.h"
#include "sebt/oracle.h"

/* The crossover auto uses: cuda when bars x combos >= bar_combos. */
typedef struct {
    double bar_combos;       /* INFINITY: cuda never won where it was measured */
    bool measured;           /* read from a file check-gpu --benchmark saved */
    char source[768];        /* the file, or a description of the model */
} cli_crossover;

typedef struct {
    const char *backend;     /* "fast_cpu" or "cuda" */
    char why[1280];           /* one line, no trailing newline */
} cli_auto_choice;

/* CPU threads a sweep will use: OMP_NUM_THREADS, else the online cores. */
int cli_cpu_threads(void);

/* Where --save writes and auto reads the crossover: SEBT_CROSSOVER_FILE,
 * else $XDG_CONFIG_HOME/sebt/crossover, else ~/.config/sebt/crossover. */
void cli_crossover_path(char *buf, size_t bufsize);

/* The crossover for device d with cpu_threads threads: the saved one when a
 * file exists for this device, else the model (gpu/README.md "auto").
 * A malformed file is printed as an error and returns 2, else 0. */
int cli_crossover_for(const char *cmd, const sebt_gpu_device *d, int cpu_threads, cli_crossover *out);

/* The crossover from check-gpu --benchmark's rows: n rows of work w[k]
 * (bar-combos, increasing) where cuda took diff[k] seconds more than
 * fast_cpu (negative: cuda faster). The work from which cuda wins at every
 * larger size measured, interpolated linearly with the row before it (a
 * lone win at a small size, noise or a warm-up, is not a crossover);
 * INFINITY when cuda does not win at the largest size. */
double cli_crossover_measured(const double *w, const double *diff, size_t n);

/* What auto picks for bars x combos now, with the reason. info is filled
 * from sebt_gpu_query (n_devices 0 when none is usable). Returns 0, or 2
 * after printing an error about a malformed crossover file. */
int cli_auto_choose(const char *cmd, size_t bars, size_t combos, cli_auto_choice *out);

/* Device memory for the CUDA stand-in per fuzz case: whether
 * fuzz and validate vary it for backend b (cuda, and SEBT_CUDA_HOST_MEMORY
 * not set by the user), the size a case gets (0: the stand-in's default;
 * a pure function of the case, so `sebt fuzz --case N` gets it again),
 * and the sebt_fuzz_opts.before_case hook that sets it. */
bool cli_vary_device_memory(const sebt_backend *b);
size_t cli_case_device_memory(const sebt_fuzz_case *c, bool big, uint64_t index);
void cli_device_memory_hook(void *user, const sebt_fuzz_case *c, bool big, uint64_t index);

#endif
