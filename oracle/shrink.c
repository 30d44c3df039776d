/* Shrinking a diverging case to something a person can read.
 *
 * Greedy and deterministic: every step tries a smaller or simpler case and
 * keeps it when the candidate still diverges on it. Bars go first (delta
 * debugging: halves, quarters, ... single bars), then windows and
 * parameters, then values; the round repeats while anything changed,
 * because smaller windows let more bars go. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "oracle_internal.h"

/* A cap on oracle runs so a pathological case cannot shrink forever. */
#define SHRINK_MAX_CHECKS 20000
#define SHRINK_MAX_SECONDS 60.0
/* A batch of thousands of combos (a wide call) is checked in seconds per
 * step, and a bug that needs thousands of them cannot drop many: the
 * reproducer is kept as far as it got after this long. */
#define SHRINK_WIDE_COMBOS 1024
#define SHRINK_WIDE_SECONDS 15.0
/* The longest head of a long case tried (shrink_bars), and the parts a
 * case no head shows is cut into at the finest. */
#define SHRINK_HEAD_MAX 20000
#define SHRINK_LONG_PARTS 16

typedef struct {
    const sebt_backend *cand;
    size_t checks;
    double deadline;
    sebt_divergence div;
    /* The batch: n combos run together with co's options; combos[focus]
     * is the one being simplified (the others only when a bug needs them). */
    sebt_params *combos;
    size_t n, focus;
    oracle_case_opts co;
    sebt_params *scratch;
    /* The bug being shrunk: a step is kept only when the divergence stays
     * of this kind ("any divergence" would let another disagreement
     * take over, and the reproducer would no longer show the bug). */
    sebt_divergence target;
    bool have_target;
} shrinker;

/* Whether feature column `from` feeds `what` (SPEC §3-5; the inputs in
 * sebt/strategy.def): TR feeds ATR, ATR feeds tr_z and the valid bars,
 * every column feeds the signal. A divergence that moves to a column
 * upstream is the same bug seen nearer its cause (a wrong ATR block shows
 * first in tr_z, then in atr itself). */
static bool upstream(const char *what, const char *from)
{
    if (strcmp(what, "signal") == 0)
        return sebt_feature_index(from) >= 0 || strcmp(from, "valid") == 0;
    int w = strcmp(what, "valid") == 0 ? SEBT_FI_atr : sebt_feature_index(what);
    if (w < 0)
        return false;
    if (w != sebt_feature_index(what) && strcmp(from, sebt_feature_table[w].name) == 0)
        return true;
    const char *in = sebt_feature_table[w].inputs;
    size_t len = strlen(from);
    while (*in) {
        size_t n = strcspn(in, " ");
        if (n == len && strncmp(in, from, n) == 0)
            return true;
        char input[32];
        snprintf(input, sizeof input, "%.*s", (int)n, in);
        if (sebt_feature_index(input) >= 0 && upstream(input, from))
            return true;
        in += n + (in[n] == ' ');
    }
    return false;
}

static bool out_of_budget(const shrinker *k)
{
    return k->checks >= SHRINK_MAX_CHECKS || oracle_now() > k->deadline;
}

/* Whether the candidate still diverges on s with the batch's combos, the
 * focus combo replaced by p. Errors count as "no": a change that makes the
 * case invalid is simply not taken. */
static bool still_batch(shrinker *k, const sebt_series *s, const sebt_params *combos, size_t n)
{
    if (out_of_budget(k))
        return false;
    k->checks++;
    if (sebt_series_check(s, NULL) != SEBT_OK)
        return false;
    for (size_t i = 0; i < n; i++)
        if (sebt_params_validate(&combos[i], NULL) != SEBT_OK)
            return false;
    bool diverged = false;
    sebt_divergence d;
    sebt_error err = { 0 };
    size_t which = 0;
    if (oracle_check_case(k->cand, s, combos, n, &k->co, &diverged, &d, NULL, &which, &err) != SEBT_OK)
        return false;
    if (diverged && k->have_target && !oracle_same_kind(&k->target, &d)) {
        if (!upstream(k->target.what, d.what))
            return false;
        k->target = d; /* closer to the cause: the column the other is computed from */
    }
    if (diverged) {
        k->div = d;
        k->div.combo = which;
    }
    return diverged;
}

static bool still(shrinker *k, const sebt_series *s, const sebt_params *p)
{
    memcpy(k->scratch, k->combos, k->n * sizeof *k->scratch);
    k->scratch[k->focus] = *p;
    return still_batch(k, s, k->scratch, k->n);
}

/* Drops every combo but the focus that the divergence does not need:
 * halves of the others first, then one at a time. */
static void shrink_combos(shrinker *k, const sebt_series *s, bool *changed)
{
    /* Most batch bugs need two combos: the focus and one before it. */
    if (k->n > 2 && k->focus > 0) {
        size_t others[2] = { 0, k->focus - 1 };
        for (size_t i = 0; i < 2 && k->n > 2; i++) {
            sebt_params pair[2] = { k->combos[others[i]], k->combos[k->focus] };
            if (still_batch(k, s, pair, 2)) {
                k->combos[0] = pair[0];
                k->combos[1] = pair[1];
                k->n = 2;
                k->focus = 1;
                *changed = true;
            }
        }
    }
    for (size_t chunk = k->n / 2; chunk >= 1 && k->n > 1 && !out_of_budget(k); chunk /= 2) {
        for (size_t from = 0; from < k->n && k->n > 1 && !out_of_budget(k);) {
            /* Candidate batch: without [from, from+chunk), the focus kept. */
            size_t m = 0, focus = 0;
            for (size_t i = 0; i < k->n; i++) {
                if (i >= from && i < from + chunk && i != k->focus)
                    continue;
                if (i == k->focus)
                    focus = m;
                k->scratch[m++] = k->combos[i];
            }
            if (m < k->n && still_batch(k, s, k->scratch, m)) {
                memcpy(k->combos, k->scratch, m * sizeof *k->combos);
                k->n = m;
                k->focus = focus;
                *changed = true;
            } else {
                from += chunk;
            }
        }
    }
}

/* s without bars [from, from+len). */
static sebt_status without(const sebt_series *s, size_t from, size_t len, sebt_series *out,
                           sebt_error *err)
{
    sebt_status st = sebt_series_alloc(out, s->n - len, err);
    if (st)
        return st;
    for (size_t t = 0, o = 0; t < s->n; t++) {
        if (t >= from && t < from + len)
            continue;
        out->ts[o] = s->ts[t];
        out->open[o] = s->open[t];
        out->high[o] = s->high[t];
        out->low[o] = s->low[t];
        out->close[o] = s->close[t];
        out->volume[o] = s->volume[t];
        o++;
    }
    sebt_series_recount(out);
    return SEBT_OK;
}

/* Keeps the first len bars of s when the candidate still diverges on them
 * (*kept). */
static sebt_status keep_head(shrinker *k, sebt_series *s, const sebt_params *p, size_t len, bool *kept,
                             sebt_error *err)
{
    sebt_series head;
    sebt_status st = sebt_series_slice(s, 0, len, &head, err);
    if (st)
        return st;
    sebt_series_recount(&head);
    *kept = still(k, &head, p);
    if (*kept) {
        sebt_series_free(s);
        *s = head;
    } else {
        sebt_series_free(&head);
    }
    return SEBT_OK;
}

static sebt_status shrink_bars(shrinker *k, sebt_series *s, const sebt_params *p, bool *changed,
                               sebt_error *err)
{
    /* A long case first tries its first few bars: most bugs show early,
     * and each check on 10^5 bars costs as much as thousands on 50. */
    static const size_t heads[] = { 50, 200, 1000, 5000, SHRINK_HEAD_MAX };
    bool kept = false;
    for (size_t i = 0; i < sizeof heads / sizeof heads[0] && heads[i] * 2 <= s->n && !kept && !out_of_budget(k);
         i++) {
        sebt_status st = keep_head(k, s, p, heads[i], &kept, err);
        if (st)
            return st;
        *changed = *changed || kept;
    }
    /* A case no head shows (a bug that needs many bars, such as one past
     * bar 100,000): its bars after the divergence go in one check, then
     * halves down to sixteenths, not single bars, since every check walks
     * all its bars and such a bug lets few of them go. */
    size_t smallest_chunk = 1;
    if (s->n > 2 * SHRINK_HEAD_MAX) {
        if (k->div.bar >= 0 && (size_t)k->div.bar + 1 < s->n && !out_of_budget(k)) {
            sebt_status st = keep_head(k, s, p, (size_t)k->div.bar + 1, &kept, err);
            if (st)
                return st;
            *changed = *changed || kept;
        }
        smallest_chunk = s->n / SHRINK_LONG_PARTS;
    }
    for (size_t chunk = s->n / 2; chunk >= smallest_chunk && chunk >= 1 && !out_of_budget(k); chunk /= 2) {
        for (size_t from = 0; from < s->n && !out_of_budget(k);) {
            size_t len = from + chunk <= s->n ? chunk : s->n - from;
            sebt_series smaller;
            sebt_status st = without(s, from, len, &smaller, err);
            if (st)
                return st;
            if (still(k, &smaller, p)) {
                sebt_series_free(s);
                *s = smaller;
                *changed = true;
            } else {
                sebt_series_free(&smaller);
                from += len;
            }
        }
    }
    return SEBT_OK;
}

static void try_param(shrinker *k, const sebt_series *s, sebt_params *p, sebt_params cand,
                      bool *changed)
{
    bool same = true;
    for (int i = 0; i < SEBT_N_PARAMS && same; i++)
        same = sebt_params_get_double(&cand, i) == sebt_params_get_double(p, i);
    if (same)
        return;
    if (still(k, s, &cand)) {
        *p = cand;
        *changed = true;
    }
}

static void shrink_params(shrinker *k, const sebt_series *s, sebt_params *p, bool *changed)
{
    /* Every bar count of sebt/strategy.def (windows, max_hold), in its
     * order: smallest first, then halving, then one less: a window clamped
     * to the series length is as good as a longer one. */
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        const sebt_param_info *info = &sebt_param_table[i];
        if (info->type != SEBT_PARAM_INT)
            continue;
        int32_t min = (int32_t)info->min + info->min_excluded, cur;
        memcpy(&cur, (char *)p + info->offset, sizeof cur);
        int32_t tries[] = { min, cur / 2, cur - 1, (int32_t)(s->n + 1) };
        for (size_t j = 0; j < 4; j++) {
            memcpy(&cur, (char *)p + info->offset, sizeof cur);
            if (tries[j] < min || tries[j] >= cur)
                continue;
            sebt_params c = *p;
            memcpy((char *)&c + info->offset, &tries[j], sizeof tries[j]);
            try_param(k, s, p, c, changed);
        }
    }
    sebt_params c;
    c = *p; c.fee_bp = 0; try_param(k, s, p, c, changed);
    c = *p; c.slippage_bp = 0; try_param(k, s, p, c, changed);
    c = *p; c.use_time = false; try_param(k, s, p, c, changed);
    c = *p; c.use_tp = false; try_param(k, s, p, c, changed);
    c = *p; c.use_stop = false; try_param(k, s, p, c, changed);
    c = *p; c.atr_stop_mult = 0; try_param(k, s, p, c, changed);
    c = *p; c.reward_r = 1; try_param(k, s, p, c, changed);
    c = *p; c.vol_z = -100; try_param(k, s, p, c, changed);
    c = *p; c.tr_z = -100; try_param(k, s, p, c, changed);
    c = *p; c.cloc_min = -1; try_param(k, s, p, c, changed);
    /* Each entry filter off (sebt/strategy.def's SEBT_FILTER rows). */
#define SEBT_FILTER(name, column, cmp, rhs, enable, window) \
    c = *p;                                                 \
    c.enable = false;                                       \
    try_param(k, s, p, c, changed);
#include "sebt/strategy.def"
    /* Every double parameter, in the declaration's order: rounded to a
     * whole number, then to one decimal. */
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        const sebt_param_info *info = &sebt_param_table[i];
        if (info->type != SEBT_PARAM_DOUBLE)
            continue;
        double v;
        memcpy(&v, (char *)p + info->offset, sizeof v);
        double simpler[] = { round(v), round(v * 10) / 10 };
        for (size_t j = 0; j < 2; j++) {
            c = *p;
            memcpy((char *)&c + info->offset, &simpler[j], sizeof(double));
            try_param(k, s, p, c, changed);
        }
    }
}

static double round_sig(double x, int digits)
{
    if (x == 0 || !isfinite(x))
        return x;
    double e = pow(10.0, digits - 1 - (int)floor(log10(fabs(x))));
    return round(x * e) / e;
}

/* Fewer significant digits everywhere, bars kept valid; and regular
 * timestamps from a round start. */
static sebt_status shrink_values(shrinker *k, sebt_series *s, const sebt_params *p,
                                 bool *changed, sebt_error *err)
{
    sebt_series c;
    sebt_status st = sebt_series_slice(s, 0, s->n, &c, err);
    if (st)
        return st;
    int64_t step = s->interval_ms > 0 ? s->interval_ms : 60000;
    for (size_t t = 0; t < c.n; t++)
        c.ts[t] = 1600000000000LL + (int64_t)t * step;
    if (memcmp(c.ts, s->ts, c.n * sizeof *c.ts) != 0 && still(k, &c, p)) {
        memcpy(s->ts, c.ts, c.n * sizeof *c.ts);
        *changed = true;
    }
    for (int digits = 1; digits <= 6; digits++) {
        for (size_t t = 0; t < c.n; t++) {
            if (sebt_series_is_missing(s, t))
                continue;
            double o = round_sig(s->open[t], digits), cl = round_sig(s->close[t], digits);
            c.open[t] = o;
            c.close[t] = cl;
            c.high[t] = fmax(round_sig(s->high[t], digits), fmax(o, cl));
            c.low[t] = fmax(0.0, fmin(round_sig(s->low[t], digits), fmin(o, cl)));
            c.volume[t] = round_sig(s->volume[t], digits);
        }
        if (memcmp(c.open, s->open, c.n * sizeof(double)) == 0 &&
            memcmp(c.volume, s->volume, c.n * sizeof(double)) == 0)
            break;
        if (still(k, &c, p)) {
            sebt_series_free(s);
            *s = c;
            *changed = true;
            return SEBT_OK;
        }
    }
    sebt_series_free(&c);
    return SEBT_OK;
}

sebt_status oracle_shrink_batch(const sebt_backend *cand, sebt_series *s, sebt_params *combos,
                                size_t *n, size_t *focus, oracle_case_opts *co,
                                sebt_divergence *div, bool *not_repeated, sebt_error *err)
{
    if (not_repeated)
        *not_repeated = false;
    oracle_case_opts *co_out = co;
    double limit = *n > SHRINK_WIDE_COMBOS ? SHRINK_WIDE_SECONDS : SHRINK_MAX_SECONDS;
    shrinker k = { .cand = cand, .deadline = oracle_now() + limit, .combos = combos, .n = *n, .focus = *focus };
    if (co) {
        k.co = *co;
        k.co.stats = NULL;
    }
    k.scratch = malloc((*n ? *n : 1) * sizeof *k.scratch);
    if (!k.scratch)
        return sebt_fail(err, SEBT_ERR_NOMEM, "shrink: out of memory");
    sebt_status st = SEBT_OK;
    sebt_params *p = &k.combos[k.focus];
    if (!still(&k, s, p)) {
        free(k.scratch);
        if (not_repeated) {
            *not_repeated = true;
            return SEBT_OK;
        }
        return sebt_fail(err, SEBT_ERR_USAGE, "shrink: the case does not diverge to begin with");
    }
    k.target = k.div;
    k.have_target = true;
    /* A budget in bytes splits fewer bars into fewer batches: the smallest
     * budget keeps the batches whatever the bars, so shrinking can go on. */
    if (k.co.memory_budget > 1) {
        size_t budget = k.co.memory_budget;
        k.co.memory_budget = 1;
        if (!still(&k, s, p))
            k.co.memory_budget = budget;
    }
    if (k.co.threads > 1) {
        int threads = k.co.threads;
        k.co.threads = 1;
        if (!still(&k, s, p))
            k.co.threads = threads;
    }
    for (int round = 0; round < 8 && !out_of_budget(&k); round++) {
        bool changed = false;
        shrink_combos(&k, s, &changed);
        p = &k.combos[k.focus];
        st = shrink_bars(&k, s, p, &changed, err);
        if (st == SEBT_OK) {
            shrink_params(&k, s, p, &changed);
            st = shrink_values(&k, s, p, &changed, err);
        }
        if (st || !changed)
            break;
    }
    if (st == SEBT_OK) {
        /* The divergence as it reads on the final case. */
        k.deadline = oracle_now() + 10;
        k.checks = 0;
        still(&k, s, &k.combos[k.focus]);
        *div = k.div;
    }
    *n = k.n;
    *focus = k.focus;
    if (co_out) {
        co_out->threads = k.co.threads;
        co_out->memory_budget = k.co.memory_budget;
    }
    free(k.scratch);
    return st;
}

sebt_status sebt_oracle_shrink(const sebt_backend *cand, sebt_series *s, sebt_params *p,
                               sebt_divergence *div, sebt_error *err)
{
    size_t n = 1, focus = 0;
    sebt_status st = oracle_shrink_batch(cand, s, p, &n, &focus, NULL, div, NULL, err);
    if (st == SEBT_OK)
        div->combo = 0;
    return st;
}

/* "trade 12 exit bar" -> "trade # exit bar": which trade is not the bug. */
static void kind_name(const char *what, char *out, size_t size)
{
    size_t o = 0;
    for (const char *c = what; *c && o + 1 < size; c++) {
        if (*c >= '0' && *c <= '9') {
            while (c[1] >= '0' && c[1] <= '9')
                c++;
            out[o++] = '#';
        } else {
            out[o++] = *c;
        }
    }
    out[o] = '\0';
}

/* Which side is NaN, if any: a value that turns NaN on one side is
 * another bug than one that moves. The sign of a numeric difference is
 * not kept: bars the shrinker drops move the values it is measured on. */
static int side(double ref, double cand)
{
    if (isnan(ref) || isnan(cand))
        return isnan(ref) ? (isnan(cand) ? 3 : 4) : 5;
    return 0;
}

static bool same_value(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) && isnan(b);
    return memcmp(&a, &b, sizeof a) == 0;
}

bool oracle_same_divergence(const sebt_divergence *a, const sebt_divergence *b)
{
    return strcmp(a->what, b->what) == 0 && a->bar == b->bar && same_value(a->ref_value, b->ref_value) &&
           same_value(a->cand_value, b->cand_value);
}

bool oracle_same_kind(const sebt_divergence *a, const sebt_divergence *b)
{
    char ka[sizeof a->what], kb[sizeof b->what];
    kind_name(a->what, ka, sizeof ka);
    kind_name(b->what, kb, sizeof kb);
    if (strcmp(ka, kb) != 0)
        return false;
    /* A decision (signal, exit reason, valid bar, open position): the same
     * pair of outcomes; a value: NaN on the same side, or on neither. */
    static const char *const decisions[] = { "signal", "exit", "valid", "open_at_end" };
    for (size_t i = 0; i < sizeof decisions / sizeof decisions[0]; i++)
        if (strcmp(ka, decisions[i]) == 0)
            return same_value(a->ref_value, b->ref_value) && same_value(a->cand_value, b->cand_value);
    return side(a->ref_value, a->cand_value) == side(b->ref_value, b->cand_value);
}
