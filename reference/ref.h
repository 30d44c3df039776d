/* Internals of the reference backend: SPEC §1-7 written literally, one
 * small file per rule. Nothing here is public; the only thing the rest of
 * sebt sees is sebt_reference_backend (include/sebt/backends.h).
 *
 * The reference depends on the public types alone: it calls no core
 * function, so an error is filled in here with snprintf (sebt_ref_fail). */
#ifndef SEBT_REF_H
#define SEBT_REF_H

#include <stdbool.h>

#include "sebt/analysis.h"
#include "sebt/backend.h"
#include "sebt/types.h"

/* SPEC §3 indicator columns, n bars each, NaN where undefined. */
void sebt_ref_ema(const double *close, size_t n, int32_t span, double *out);
void sebt_ref_tr(const sebt_series *s, double *out);
void sebt_ref_atr(const double *tr, size_t n, int32_t w, double *out);
void sebt_ref_zscore(const double *x, size_t n, int32_t w, double *out);
/* Bars [from, to) of that column alone: each bar's z reads only its own
 * window, so a column computed in pieces is the same column, bit for bit. */
void sebt_ref_zscore_bars(const double *x, int32_t w, size_t from, size_t to, double *out);
void sebt_ref_cloc(const sebt_series *s, double *out);
void sebt_ref_rsi(const sebt_series *s, int32_t w, double *out);

/* SPEC §3-5 for one combo into caller-owned columns of s->n entries:
 * the indicator columns, then the signal and valid columns from them. */
void sebt_ref_compute(const sebt_series *s, const sebt_params *p, sebt_features *f);
/* The same, with the bars of the two Z columns (the reference's whole cost:
 * each window summed afresh) shared among `threads` threads where there is
 * OpenMP. Every bar is still computed by sebt_ref_zscore_bars from its own
 * window, so the columns do not depend on the threads. */
void sebt_ref_compute_threads(const sebt_series *s, const sebt_params *p, sebt_features *f, int threads);
void sebt_ref_indicators(const sebt_series *s, const sebt_params *p, sebt_features *f);
void sebt_ref_decide_bars(sebt_features *f, const sebt_params *p);

/* SPEC §4's comparisons at bar t, in the order ema, vol_z, tr_z, cloc, rsi:
 * term i holds iff holds[i] (the signal is all of them); lhs[i] - rhs[i] is
 * its margin, > 0 where a strict term (the first four, "lhs > rhs") holds,
 * >= 0 where rsi's (rsi_max >= rsi) does. A term p switches off (rsi
 * without use_rsi) holds, with NaN operands: it has no margin. */
#define SEBT_REF_SIGNAL_TERMS 5
void sebt_ref_signal_terms(const sebt_features *f, const sebt_params *p, size_t t,
                           bool holds[SEBT_REF_SIGNAL_TERMS], double lhs[SEBT_REF_SIGNAL_TERMS],
                           double rhs[SEBT_REF_SIGNAL_TERMS]);

/* ---- SPEC §6: the walk, one step at a time, with a decision hook ------
 *
 * The oracle does not restate §6: its replay and its mutants run this walk
 * (SQLite's practice: the harness bends the real code, not a copy). A hook,
 * NULL in the reference backend, sees every decision with the reference's
 * answer and returns the answer the walk acts on: the replay follows a
 * tolerant candidate through a near-tie, a mutant perturbs one decision. */
typedef enum {
    SEBT_REF_TAKE,      /* flat at signal bar t: enter at u? answer: signal[t] */
    SEBT_REF_CHAIN,     /* in a position: one comparison of the exit chain,
                           the one for exit `reason` (lhs, rhs; answer: it holds) */
    SEBT_REF_EXIT,      /* the outcome: the first of the chain that holds (a
                           sebt_exit_reason), SEBT_EXIT_KINDS if none */
} sebt_ref_decision_kind;

typedef struct sebt_ref_position sebt_ref_position;

typedef struct {
    sebt_ref_decision_kind kind;
    size_t t, u;                    /* the step: valid bar t, the next valid bar u */
    int reason;                     /* CHAIN: the exit this comparison is for */
    bool enabled;                   /* CHAIN: its rule is switched on (use_stop, ...) */
    double lhs, rhs;                /* CHAIN: the operands */
    const bool *hit;                /* EXIT: the chain's answers acted on, by reason */
    const sebt_ref_position *pos;   /* the position as it stands */
    int answer;                     /* the reference's own */
} sebt_ref_decision;

typedef struct {
    void *user;
    /* The answer the walk acts on (d->answer when the hook has no opinion). */
    int (*decide)(void *user, const sebt_ref_decision *d);
    /* A trade just closed, before it is kept; it may be edited. false ends
     * the walk there (the replay found a divergence). May be NULL. */
    bool (*closed)(void *user, sebt_trade *tr);
} sebt_ref_hook;

/* One position at a time, as SPEC §6 keeps it. */
struct sebt_ref_position {
    bool open;
    size_t signal_bar, entry_bar;
    double entry, stop, risk, tp;
    int32_t bars;
};

/* One step of the walk from valid bar t to the next valid bar u: flat, a
 * signal at t enters at u's open; in a position, bar u is checked for an
 * exit. Returns true with *tr filled when the position closes at u. */
bool sebt_ref_step(const sebt_series *s, const sebt_features *f, const sebt_params *p,
                   const sebt_ref_hook *hook, sebt_ref_position *pos, size_t t, size_t u,
                   sebt_trade *tr);

/* The walk over the valid bars; trades are malloc'd into r (NULL if none),
 * with r->valid_bars and r->open_at_end (metrics left to the caller). hook
 * may be NULL: then it is SPEC §6 exactly. */
sebt_status sebt_ref_walk(const sebt_series *s, const sebt_features *f, const sebt_params *p,
                          const sebt_ref_hook *hook, sebt_result *r, sebt_error *err);

/* SPEC §7 over r->trades[0 .. r->n_trades). */
void sebt_ref_metrics(const sebt_trade *trades, size_t n, sebt_metrics *m);

/* The figures of sebt/analysis.h for r (with its trades) over the series s
 * it was run on, each from its definition (analysis.c): the checking side
 * of the analysis columns the library computes in one pass. */
void sebt_ref_trade_stats(const sebt_series *s, const sebt_result *r, sebt_trade_stats *st);

/* One row's values by column name, for sebt_ref_where. */
typedef struct {
    const char *const *names;
    const double *values;
    size_t n;
} sebt_ref_row;

/* Whether the `--where` condition `text` keeps the row, read and
 * evaluated literally from the language of docs/cli.md (where.c): 1 kept,
 * 0 rejected, -1 when it does not read as a condition over the row's
 * names (why says where). */
int sebt_ref_where(const char *text, const sebt_ref_row *row, char *why, size_t why_size);

/* The in-sample bars of a split at split_ts: those whose open time is
 * before it (windows.c). */
size_t sebt_ref_split_cut(const sebt_series *s, int64_t split_ts);
/* The walk-forward windows of train and test lengths (bars, or
 * milliseconds of open time when by_time), at most max of them: window k's
 * train bars [edges[k][0], edges[k][1]) and test bars [edges[k][2],
 * edges[k][3]), as long as its test span is whole. Returns how many. */
size_t sebt_ref_wf_windows(const sebt_series *s, int64_t train, int64_t test, bool by_time, size_t max,
                           size_t (*edges)[4]);

/* SPEC §2, the message prefixed with "combo <index>: ". */
sebt_status sebt_ref_check_params(const sebt_params *p, size_t index, sebt_error *err);
/* SPEC §1: increasing ts; each bar present or missing. */
sebt_status sebt_ref_check_series(const sebt_series *s, sebt_error *err);

sebt_status sebt_ref_fail(sebt_error *err, sebt_status code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
