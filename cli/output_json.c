/* A streaming JSON writer for the CLI's machine-readable output. It keeps
 * only a comma flag per open container: documents are written front to
 * back and never held in memory, however many trades or combos they list. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "cli.h"
#include "sebt/number.h"

void cli_json_init(cli_json *j, FILE *f, int wrap_depth)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    j->wrap_depth = wrap_depth;
}

static void indent(cli_json *j, int depth)
{
    fputc('\n', j->f);
    for (int i = 0; i < depth; i++)
        fputs("  ", j->f);
}

void cli_json_write_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)(s ? s : ""); *c; c++) {
        switch (*c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*c < 0x20)
                fprintf(f, "\\u%04x", *c);
            else
                fputc(*c, f);
        }
    }
    fputc('"', f);
}

/* Comma, line break and key before a value in the current container. */
static void begin_value(cli_json *j, const char *key)
{
    int d = j->depth;
    if (d > 0) {
        if (j->has_items[d])
            fputc(',', j->f);
        j->has_items[d] = true;
        if (d <= j->wrap_depth)
            indent(j, d);
    }
    if (key) {
        cli_json_write_string(j->f, key);
        fputc(':', j->f);
    }
}

static void open_container(cli_json *j, const char *key, char bracket)
{
    begin_value(j, key);
    fputc(bracket, j->f);
    /* Deeper nesting than any sebt document needs is a caller bug; clamping
     * keeps the output well-formed rather than writing out of bounds. */
    if (j->depth < CLI_JSON_MAX_DEPTH - 1)
        j->depth++;
    j->has_items[j->depth] = false;
}

static void close_container(cli_json *j, char bracket)
{
    int d = j->depth;
    if (d > 0 && d <= j->wrap_depth && j->has_items[d])
        indent(j, d - 1);
    fputc(bracket, j->f);
    if (j->depth > 0)
        j->depth--;
}

void cli_json_begin_object(cli_json *j, const char *key) { open_container(j, key, '{'); }
void cli_json_end_object(cli_json *j) { close_container(j, '}'); }
void cli_json_begin_array(cli_json *j, const char *key) { open_container(j, key, '['); }
void cli_json_end_array(cli_json *j) { close_container(j, ']'); }

void cli_json_string(cli_json *j, const char *key, const char *v)
{
    begin_value(j, key);
    cli_json_write_string(j->f, v);
}

void cli_json_int(cli_json *j, const char *key, int64_t v)
{
    begin_value(j, key);
    fprintf(j->f, "%" PRId64, v);
}

void cli_json_double(cli_json *j, const char *key, double v)
{
    begin_value(j, key);
    if (isfinite(v)) {
        char buf[SEBT_DOUBLE_CHARS];
        fwrite(buf, 1, sebt_format_double(v, buf), j->f);
    } else
        fputs("null", j->f);
}

void cli_json_bool(cli_json *j, const char *key, bool v)
{
    begin_value(j, key);
    fputs(v ? "true" : "false", j->f);
}

void cli_json_null(cli_json *j, const char *key)
{
    begin_value(j, key);
    fputs("null", j->f);
}

void cli_json_finish(cli_json *j)
{
    fputc('\n', j->f);
}

void cli_json_params(cli_json *j, const char *key, const sebt_params *p)
{
    cli_json_begin_object(j, key);
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        const sebt_param_info *info = &sebt_param_table[i];
        double v = sebt_params_get_double(p, i);
        switch (info->type) {
        case SEBT_PARAM_INT: cli_json_int(j, info->name, (int64_t)v); break;
        case SEBT_PARAM_DOUBLE: cli_json_double(j, info->name, v); break;
        case SEBT_PARAM_BOOL: cli_json_bool(j, info->name, v != 0.0); break;
        }
    }
    cli_json_end_object(j);
}

void cli_json_metrics(cli_json *j, const char *key, const sebt_metrics *m)
{
    cli_json_begin_object(j, key);
    cli_json_int(j, "n", m->n);
    cli_json_double(j, "win_rate", m->win_rate);
    cli_json_double(j, "avg_r", m->avg_r);
    cli_json_double(j, "total_pnl", m->total_pnl);
    cli_json_double(j, "max_dd", m->max_dd);
    cli_json_double(j, "sharpe", m->sharpe);
    cli_json_end_object(j);
}

void cli_json_analysis(cli_json *j, const char *key, const sebt_trade_stats *st)
{
    cli_json_begin_object(j, key);
    cli_json_begin_object(j, "exits");
    for (int k = 0; k < SEBT_EXIT_KINDS; k++)
        cli_json_int(j, sebt_exit_reason_name((sebt_exit_reason)k), st->exits[k]);
    cli_json_end_object(j);
    cli_json_double(j, "gross_profit", st->gross_profit);
    cli_json_double(j, "gross_loss", st->gross_loss);
    cli_json_double(j, "profit_factor", st->profit_factor);
    cli_json_int(j, "bars_in_market", st->bars_in_market);
    cli_json_double(j, "exposure", st->exposure);
    cli_json_double(j, "years", st->years);
    cli_json_double(j, "sharpe_annual", st->sharpe_annual);
    cli_json_end_object(j);
}

void cli_json_relative(cli_json *j, const char *key, const sebt_relative_stats *rel)
{
    cli_json_begin_object(j, key);
    for (int i = 0; i < SEBT_N_RELATIVE; i++) {
        double v = sebt_relative_value(rel, i);
        if (sebt_relative_fields[i].count)
            cli_json_int(j, sebt_relative_fields[i].name, (int64_t)v);
        else
            cli_json_double(j, sebt_relative_fields[i].name, v);
    }
    cli_json_end_object(j);
}

void cli_json_schema(cli_json *j, const char *name)
{
    char v[64];
    snprintf(v, sizeof v, "sebt-%s/%d", name, CLI_JSON_SCHEMA_VERSION);
    cli_json_string(j, "schema", v);
}

void cli_json_contract(cli_json *j, const sebt_backend *b)
{
    cli_json_string(j, "contract", b->contract.kind == SEBT_CONTRACT_EXACT ? "exact" : "tolerant");
}

void cli_json_begin_check(cli_json *j, int wrap_depth, const char *schema, const sebt_backend *b)
{
    cli_json_init(j, stdout, wrap_depth);
    cli_json_begin_object(j, NULL);
    cli_json_schema(j, schema);
    cli_json_string(j, "backend", b->name);
    cli_json_contract(j, b);
}
