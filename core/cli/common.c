#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "sebt %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\nTry 'sebt %s --help'.\n", cmd);
    va_end(ap);
    return CLI_EXIT_USAGE;
}

int cli_exit_code_for(sebt_status st)
{
    switch (st) {
    case SEBT_OK: return CLI_EXIT_OK;
    case SEBT_ERR_NODEVICE: return CLI_EXIT_NO_DEVICE;
    case SEBT_ERR_USAGE:
    case SEBT_ERR_INPUT:
    case SEBT_ERR_PARAM:
    case SEBT_ERR_IO:
    case SEBT_ERR_UNAVAILABLE: return CLI_EXIT_USAGE;
    case SEBT_ERR_NOMEM:
    case SEBT_ERR_INTERNAL: return CLI_EXIT_CHECK_FAILED;
    }
    return CLI_EXIT_USAGE;
}

int cli_report_error(const char *cmd, const sebt_error *err)
{
    fprintf(stderr, "sebt %s: error: %s\n", cmd, err->msg[0] ? err->msg : sebt_status_name(err->code));
    return cli_exit_code_for(err->code);
}

int cli_load_series(const char *cmd, const char *path, bool lenient, bool fill_gaps, sebt_series *out)
{
    if (!path)
        return cli_usage_error(cmd, "--data FILE is required");
    sebt_load_opts opts = { .lenient = lenient, .fill_gaps = fill_gaps };
    sebt_error err = { 0 };
    if (sebt_load_csv(path, &opts, out, &err) != SEBT_OK)
        return cli_report_error(cmd, &err);
    if (lenient && out->n_rejected)
        fprintf(stderr, "sebt %s: --lenient: %zu rejected row(s) of %s kept as missing bars\n",
                cmd, out->n_rejected, path);
    return CLI_EXIT_OK;
}

FILE *cli_open_output(const char *cmd, const char *path)
{
    if (!path || strcmp(path, "-") == 0)
        return stdout;
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "sebt %s: error: cannot write %s\n", cmd, path);
    return f;
}

void cli_close_output(FILE *f)
{
    if (f && f != stdout)
        fclose(f);
    else if (f)
        fflush(f);
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void cli_progress_init(cli_progress *p, const char *label)
{
    p->label = label;
    p->start = cli_now();
    p->tty = isatty(STDERR_FILENO) && !getenv("CI");
    p->drawn = false;
}

void cli_progress_update(void *user, size_t done, size_t total)
{
    cli_progress *p = user;
    if (!p->tty || total == 0)
        return;
    double el = cli_now() - p->start;
    if (el < 1.0 && !p->drawn)
        return;
    int width = 30, filled = (int)((double)width * (double)done / (double)total);
    char bar[32];
    for (int i = 0; i < width; i++)
        bar[i] = i < filled ? '#' : '.';
    bar[width] = '\0';
    double eta = done ? el * (double)(total - done) / (double)done : 0.0;
    fprintf(stderr, "\r%s [%s] %zu/%zu  %.0fs elapsed, ~%.0fs left ", p->label, bar, done, total, el, eta);
    p->drawn = true;
}

void cli_progress_finish(cli_progress *p)
{
    if (p->drawn)
        fprintf(stderr, "\r\033[K");
    p->drawn = false;
}

void cli_print_double(FILE *f, double v)
{
    if (isnan(v))
        fputs("nan", f);
    else if (isinf(v))
        fputs(v > 0 ? "inf" : "-inf", f);
    else
        fprintf(f, "%.17g", v);
}
