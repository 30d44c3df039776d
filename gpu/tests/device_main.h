/* main() for the tests that need the cuda backend, so that one that cannot
 * run is never reported as passed:
 *
 *   ctest entry *_host  SEBT_CUDA_LIBRARY names libsebt_cuda_host.so (host
 *                       execution): the backend must open, else FAIL;
 *   ctest entry plain   a real device: without one the program prints why
 *                       and exits 77, which ctest shows as Skipped
 *                       (SKIP_RETURN_CODE 77); SEBT_REQUIRE_GPU=1 makes
 *                       that a failure, for a GPU runner that must not go
 *                       green by losing its device.
 *
 * Which of the two is asked for comes from SEBT_TEST_CUDA_MODE (host or
 * device), set by CMake on each entry. */
#ifndef SEBT_TEST_DEVICE_MAIN_H
#define SEBT_TEST_DEVICE_MAIN_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sebt/gpu.h"
#include "sebt/sebt.h"

#define SEBT_TEST_SKIP_CODE 77

static bool test_host_mode(void)
{
    const char *m = getenv("SEBT_TEST_CUDA_MODE");
    return m && strcmp(m, "host") == 0;
}

static int device_gate(void)
{
    const sebt_backend *b = NULL;
    sebt_error err = { 0 };
    sebt_status st = sebt_backend_get("cuda", &b, &err);
    if (test_host_mode()) {
        if (st != SEBT_OK || !b || !strstr(b->description, "host execution")) {
            fprintf(stderr, "FAIL: host execution of cuda did not open (SEBT_CUDA_LIBRARY=%s): %s\n",
                    getenv("SEBT_CUDA_LIBRARY") ? getenv("SEBT_CUDA_LIBRARY") : "unset", err.msg);
            return 1;
        }
        return 0;
    }
    sebt_gpu_info info;
    sebt_error qerr = { 0 };
    if (st == SEBT_OK && sebt_gpu_query(&info, &qerr) == SEBT_OK && info.selected >= 0)
        return 0;
    const char *why = st != SEBT_OK ? err.msg : qerr.msg;
    const char *req = getenv("SEBT_REQUIRE_GPU");
    if (req && strcmp(req, "1") == 0) {
        fprintf(stderr, "FAIL: SEBT_REQUIRE_GPU=1 and no usable CUDA device: %s\n", why);
        return 1;
    }
    printf("SKIPPED: no usable CUDA device: %s\n", why);
    return SEBT_TEST_SKIP_CODE;
}

int main(int argc, char *argv[])
{
    /* In a child: a CUDA context must not exist before Criterion forks
     * the tests (CUDA does not survive fork). */
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0)
        _exit(device_gate());
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) {
        fprintf(stderr, "FAIL: the device check did not finish\n");
        return 1;
    }
    int gate = WEXITSTATUS(status);
    if (gate)
        return gate;
    struct criterion_test_set *tests = criterion_initialize();
    int result = 0;
    if (criterion_handle_args(argc, argv, true))
        result = !criterion_run_all_tests(tests);
    criterion_finalize(tests);
    return result;
}

#endif
