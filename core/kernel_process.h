/* Kernels in any language: a backend served by a child process over the
 * kernel protocol (docs/kernel-protocol.md). Internal to the registry. */
#ifndef SEBT_KERNEL_PROCESS_H
#define SEBT_KERNEL_PROCESS_H

#include "sebt/sebt.h"

/* The prefix of a --backend value that is a kernel command. */
#define SEBT_KERNEL_PREFIX "exec:"

/* Starts the command of value ("exec:CMD") once per process and shakes
 * hands; the backend's name and contract are the kernel's. */
sebt_status kernel_open(const char *value, const sebt_backend **out, sebt_error *err);

/* The shell-quoted --backend value of a kernel backend, or NULL when b is
 * not one. */
const char *kernel_selector(const sebt_backend *b);

#endif
