/* The edges a split and a walk-forward ran on, against the reference's
 * literal count of them (core/walkforward_check.c): internal to the
 * library, hidden from libsebt.so's exports. */
#ifndef SEBT_OOS_CHECK_H
#define SEBT_OOS_CHECK_H

#include "sebt/oos.h"

/* false, with what the cut is and should be in what, when `cut` is not
 * the count of bars before split_ts. */
__attribute__((visibility("hidden"))) bool sebt_split_cut_agrees(const sebt_series *s, int64_t split_ts, size_t cut,
                                                                 char *what, size_t size);
/* 1 when r's windows are those o's lengths define on s; 0 naming the
 * first window and edge that differ (or the count of windows) in what; -1
 * out of memory. */
__attribute__((visibility("hidden"))) int sebt_wf_edges_agree(const sebt_series *s, const sebt_wf_opts *o,
                                                              const sebt_wf_result *r, char *what, size_t size);

#endif
