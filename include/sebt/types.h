/* Public types of sebt: the series, a combo's parameters, features, trades,
 * metrics and errors. Every backend (reference, fast_cpu, cuda) and every
 * tool (oracle, bench, CLI) speaks these types and nothing else.
 *
 * The rules behind each field are in SPEC.md, at the root of the sebt
 * source tree; section numbers below point there. */
#ifndef SEBT_TYPES_H
#define SEBT_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------ */

/* Return codes. The library never prints and never exits: a failing call
 * returns one of these and fills a sebt_error with a message a person can
 * act on ("data.csv:17:3: expected a number for 'high', got 'abc'"). */
typedef enum {
    SEBT_OK = 0,
    SEBT_ERR_USAGE,     /* a caller passed something the API does not accept */
    SEBT_ERR_INPUT,     /* malformed data file */
    SEBT_ERR_PARAM,     /* a parameter outside its SPEC §2 rule */
    SEBT_ERR_IO,        /* a file could not be opened, read or written */
    SEBT_ERR_NOMEM,     /* an allocation failed */
    SEBT_ERR_NODEVICE,  /* a GPU backend was asked for and none is usable */
    SEBT_ERR_UNAVAILABLE, /* a backend is not built into this binary */
    SEBT_ERR_INTERNAL,  /* a bug in sebt: please report it */
    SEBT_ERR_PROTOCOL,  /* a kernel that shook hands then broke the protocol: the kernel's bug */
    SEBT_ERR_TIMEOUT,   /* a backend did not return within its time limit (a kernel's request, a checked call) */
    SEBT_ERR_VERIFY     /* a sweep's own proof found a result that differs from its recomputation */
} sebt_status;

#define SEBT_ERROR_MSG_MAX 512

typedef struct {
    sebt_status code;
    char msg[SEBT_ERROR_MSG_MAX];
} sebt_error;

/* ---- series (SPEC §1) -------------------------------------------------- */

/* N bars as a struct of arrays. A missing bar has all five doubles NaN.
 * ts is milliseconds since the Unix epoch, strictly increasing. */
typedef struct {
    size_t n;
    int64_t *ts;
    double *open;
    double *high;
    double *low;
    double *close;
    double *volume;
    /* What the loader did to get here (0 for series built in memory). */
    size_t n_missing;        /* missing bars in the series, whatever the cause */
    size_t n_rejected;       /* rows turned into missing bars by --lenient */
    size_t n_gap_filled;     /* missing bars inserted by --fill-gaps */
    int64_t interval_ms;     /* most common step between timestamps, 0 if n < 2 */
} sebt_series;

/* ---- parameters of one combo (SPEC §2) --------------------------------- */

/* The fields, their types, rules and defaults are declared once, in
 * sebt/strategy.def (SPEC §2 order). */
typedef struct {
#define SEBT_PARAM(name, ctype, kind, min, min_excluded, def, role) ctype name;
#include "sebt/strategy.def"
} sebt_params;

/* SEBT_PI_<name>: a parameter's index in sebt_param_table; SEBT_N_PARAMS
 * of them. */
enum {
#define SEBT_PARAM(name, ctype, kind, min, min_excluded, def, role) SEBT_PI_##name,
#include "sebt/strategy.def"
    SEBT_N_PARAMS
};

typedef enum { SEBT_PARAM_INT, SEBT_PARAM_DOUBLE, SEBT_PARAM_BOOL } sebt_param_type;

/* What a parameter sets: a feature's window, a signal term (its threshold
 * or its switch), an exit rule, the costs. */
typedef enum { SEBT_ROLE_WINDOW, SEBT_ROLE_SIGNAL, SEBT_ROLE_EXIT, SEBT_ROLE_COST } sebt_param_role;

/* One row per field of sebt_params, in SPEC §2 order, with its rule, made
 * from sebt/strategy.def: the one place SPEC §2's table is written for
 * everything but the roles that keep their own copy on purpose (the
 * reference, the template, the numba peer), which tests check against it.
 * A double must be finite; a number must be >= min, or > min where
 * min_excluded; a boolean has no rule. */
typedef struct {
    const char *name;
    sebt_param_type type;
    size_t offset;         /* offsetof(sebt_params, field) */
    double min;            /* -INFINITY: no lower bound */
    bool min_excluded;
    double default_value;  /* SPEC §2's default (a boolean as 0 or 1) */
    sebt_param_role role;
} sebt_param_info;

/* ---- features (SPEC §3-5) ---------------------------------------------- */

/* SEBT_FI_<name>: a feature column's index; SEBT_TI_<name>: a signal
 * term's (SPEC §4, sebt/strategy.def's order). */
enum {
#define SEBT_FEATURE(name, inputs, window) SEBT_FI_##name,
#include "sebt/strategy.def"
    SEBT_N_FEATURES
};
enum {
#define SEBT_TERM(name, column, cmp, rhs_kind, rhs, enable) SEBT_TI_##name,
#include "sebt/strategy.def"
    SEBT_N_TERMS
};

/* The indicator columns of one combo, n entries each, NaN where undefined:
 * sebt/strategy.def's, in its order, by name (f->atr) or by index
 * (f->col[SEBT_FI_atr]), the same pointers. signal[t] is SPEC §4, valid[t]
 * is SPEC §5 (ATR defined). */
typedef struct {
    size_t n;
    union {
        struct {
#define SEBT_FEATURE(name, inputs, window) double *name;
#include "sebt/strategy.def"
        };
        double *col[SEBT_N_FEATURES];
    };
    uint8_t *signal;
    uint8_t *valid;
} sebt_features;

/* ---- trades and metrics (SPEC §6-7) ------------------------------------ */

typedef enum {
    SEBT_EXIT_STOP_GAP = 0,
    SEBT_EXIT_STOP = 1,
    SEBT_EXIT_TP = 2,
    SEBT_EXIT_TIME = 3
} sebt_exit_reason;
/* The exit kinds, in the order SPEC §6 checks them. As a decision's
 * outcome (the oracle's), SEBT_EXIT_KINDS means "no exit on this bar";
 * their names come from one table: sebt_exit_outcome_name (sebt.h). */
#define SEBT_EXIT_KINDS 4

/* Indices are into the series as loaded (missing bars counted). */
typedef struct {
    int64_t signal_index;
    int64_t entry_index;
    int64_t exit_index;
    double entry_price;
    double exit_price;
    double stop;
    double tp;
    double risk;
    double pnl;
    double r;
    sebt_exit_reason reason;
    int32_t bars_held;
} sebt_trade;

/* A position still open after the last valid bar: not a trade. */
typedef struct {
    bool open;
    int64_t signal_index;
    int64_t entry_index;
    double entry_price;
    double stop;
    double tp;
    double risk;
    int32_t bars_held;    /* bars counted since entry when the series ended */
} sebt_open_position;

typedef struct {
    int64_t n;
    double win_rate;
    double avg_r;
    double total_pnl;
    double max_dd;
    double sharpe;
} sebt_metrics;

/* What a backtest of one combo produces. trades is malloc'd by the backend
 * (NULL when the caller did not ask for trades; n_trades is still set);
 * release it with sebt_result_free. */
typedef struct {
    sebt_metrics metrics;
    sebt_open_position open_at_end;
    size_t valid_bars;
    size_t n_trades;
    sebt_trade *trades;
} sebt_result;

#ifdef __cplusplus
}
#endif

#endif
