/* stdout as a FILE* of its own that keeps the reason its first write
 * failed: stdio forgets errno once a failed write has emptied its buffer,
 * and "writing stdout failed" without "No space left on device" leaves the
 * user to guess (sweep keeps it the same way, cli/sweep_output.c). */
#define _GNU_SOURCE   /* fopencookie */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "cli.h"

static ssize_t so_write(void *cookie, const char *buf, size_t size)
{
    int *first_errno = cookie;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(STDOUT_FILENO, buf + done, size - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (!*first_errno)
                *first_errno = n < 0 ? errno : EIO;
            return -1;
        }
        done += (size_t)n;
    }
    return (ssize_t)size;
}

FILE *cli_stdout_open(int *first_errno)
{
    *first_errno = 0;
    fflush(stdout);   /* what went out through stdout itself comes first */
    cookie_io_functions_t io = { .read = NULL, .write = so_write, .seek = NULL, .close = NULL };
    return fopencookie(first_errno, "w", io);
}
