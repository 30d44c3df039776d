/* The allocation functions a fault-injecting test replaces: a program
 * linked with -Wl,--wrap=malloc (and calloc, realloc, strdup) calls
 * __wrap_NAME, which reaches the C library through __real_NAME.
 * sebt_faultsim (cli/tests/faultsim) and oracle_test_nomem use it. */
#ifndef SEBT_TEST_ALLOC_WRAP_H
#define SEBT_TEST_ALLOC_WRAP_H

#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);

#endif
