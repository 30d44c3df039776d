/* Bugs planted on purpose, for the tests that show a check catches them
 * (cli/tests/mutants_test.sh): compiled only where SEBT_TEST_FAULTS is
 * defined, which is the test-only sebt_mutants build and never what ships
 * or installs. There, SEBT_TEST_FAULT=NAME plants the bug NAME. Only the
 * files cli/tests/mutants/mutants.cmake lists are compiled so: cli/'s own
 * objects are linked as the command compiled them (a hook there would do
 * nothing). */
#ifndef SEBT_TEST_FAULTS_H
#define SEBT_TEST_FAULTS_H

#ifdef SEBT_TEST_FAULTS
#include <stdlib.h>
#include <string.h>
static inline int sebt_test_fault(const char *name)
{
    const char *v = getenv("SEBT_TEST_FAULT");
    return v && strcmp(v, name) == 0;
}
#define SEBT_FAULT(name) sebt_test_fault(name)
#else
#define SEBT_FAULT(name) 0
#endif

#endif
