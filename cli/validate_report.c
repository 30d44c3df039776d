/* `sebt validate`: the reports of a run: text, JSON, JUnit XML, Markdown,
 * and the line each check prints as it finishes. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sebt/backends.h"
#include "validate.h"

/* Messages and commands are built in fixed buffers that live in shared
 * memory; one that would not fit (a path of thousands of characters) is
 * cut, never overflowed, which is what this warning is about. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

const char *const status_names[] = { "pass", "fail", "error", "skipped", "crash" };

const char *check_summary(const v_check *k, char *buf, size_t size)
{
    const v_outcome *o = &k->out;
    if (o->status != V_PASS || strcmp(k->stage, "speed") == 0 || strcmp(k->stage, "anti-vacuity") == 0 ||
        strcmp(k->stage, "determinism") == 0 || strcmp(k->stage, "bad-input") == 0 ||
        strcmp(k->stage, "written-sweep") == 0 || strcmp(k->stage, "big-call") == 0) {
        snprintf(buf, size, "%s%s%s", o->message, o->warning[0] ? "; WARNING: " : "", o->warning);
    } else if (strcmp(k->stage, "fuzz") == 0) {
        snprintf(buf, size, "%" PRIu64 " cases, %" PRIu64 " combos, 1-%.0f threads, %" PRIu64 " ties adjudicated",
                 o->cases, o->combos, o->value[3], o->ties);
    } else if (strcmp(k->stage, "parity") == 0) {
        char analysis[80] = "analysis columns from its trades";
        if (o->analysis_walk)
            snprintf(analysis, sizeof analysis, "analysis columns of %" PRIu64 " combos compared", o->analysis);
        snprintf(buf, size, "%" PRIu64 " bars, %" PRIu64 " combos, %" PRIu64 " trades, %" PRIu64
                 " ties adjudicated, %s", o->bars, o->combos, o->trades, o->ties, analysis);
    } else {
        snprintf(buf, size, "%" PRIu64 " bars, %" PRIu64 " ties adjudicated", o->bars, o->ties);
    }
    return buf;
}

void analysis_summary(const v_ctx *c, char *buf, size_t size)
{
    uint64_t compared = 0;
    for (size_t i = 0; i < c->n_checks; i++)
        compared += c->checks[i].out.analysis;
    cli_analysis_line(c->cand, sebt_backend_tally_batch(c->cand) != NULL, (size_t)compared, buf, size);
}

void write_text(const v_ctx *c, int code)
{
    size_t count[5] = { 0 };
    uint64_t ties = 0;
    for (size_t i = 0; i < c->n_checks; i++) {
        count[c->checks[i].out.status]++;
        ties += c->checks[i].out.ties;
    }
    printf("\nvalidate %s: %zu checks, %zu passed, %zu failed, %zu crashed, %zu errors, %zu skipped; "
           "%" PRIu64 " ties adjudicated\n", c->cand->name, c->n_checks, count[V_PASS], count[V_FAIL],
           count[V_CRASH], count[V_ERROR], count[V_SKIP], ties);
    char analysis[200];
    analysis_summary(c, analysis, sizeof analysis);
    printf("%s\n", analysis);
    for (size_t i = 0; i < c->n_checks; i++)
        if (c->checks[i].out.warning[0])
            printf("WARNING: %s %s: %s\n", c->checks[i].stage, c->checks[i].name, c->checks[i].out.warning);
    for (size_t i = 0; i < c->n_checks; i++) {
        const v_check *k = &c->checks[i];
        if (k->out.status == V_PASS || k->out.status == V_SKIP)
            continue;
        printf("\n%s %s: %s: %s\n", k->stage, k->name, status_names[k->out.status], k->out.message);
        if (k->out.detail[0])
            fputs(k->out.detail, stdout);
        if (k->out.replay[0])
            printf("replay: %s\n", k->out.replay);
    }
    printf("\nresult: %s\n", code == 0 ? "PASS" : "FAIL");
}

void write_json(const v_ctx *c, int code)
{
    cli_json j;
    cli_json_init(&j, stdout, 2);
    cli_json_begin_object(&j, NULL);
    cli_json_schema(&j, "validate");
    cli_json_string(&j, "backend", c->cand->name);
    cli_json_string(&j, "selector", c->sel);
    cli_json_string(&j, "contract", c->cand->contract.kind == SEBT_CONTRACT_EXACT ? "exact" : "tolerant");
    cli_json_double(&j, "tol", c->cand->contract.tol);
    cli_json_int(&j, "seed", (int64_t)c->a->seed);
    /* With --cases the fuzz had no time budget: 0 seconds, and its count. */
    cli_json_double(&j, "fuzz_seconds", c->a->cases ? 0.0 : c->a->time_s);
    if (c->a->cases)
        cli_json_int(&j, "fuzz_cases", (int64_t)c->a->cases);
    cli_json_bool(&j, "pass", code == 0);
    cli_json_int(&j, "exit_code", code);
    uint64_t analysis = 0;
    for (size_t i = 0; i < c->n_checks; i++)
        analysis += c->checks[i].out.analysis;
    cli_json_string(&j, "analysis_columns", cli_analysis_source(sebt_backend_tally_batch(c->cand) != NULL));
    cli_json_int(&j, "analysis_combos_compared", (int64_t)analysis);
    cli_json_begin_array(&j, "checks");
    for (size_t i = 0; i < c->n_checks; i++) {
        const v_check *k = &c->checks[i];
        const v_outcome *o = &k->out;
        cli_json_begin_object(&j, NULL);
        cli_json_string(&j, "stage", k->stage);
        cli_json_string(&j, "name", k->name);
        cli_json_string(&j, "status", status_names[o->status]);
        cli_json_double(&j, "seconds", o->seconds);
        cli_json_int(&j, "bars", (int64_t)o->bars);
        cli_json_int(&j, "combos", (int64_t)o->combos);
        cli_json_int(&j, "cases", (int64_t)o->cases);
        cli_json_int(&j, "trades", (int64_t)o->trades);
        cli_json_int(&j, "ties_adjudicated", (int64_t)o->ties);
        cli_json_int(&j, "analysis_combos_compared", (int64_t)o->analysis);
        if (strcmp(k->stage, "speed") == 0 && o->status != V_SKIP) {
            cli_json_double(&j, "candidate_seconds", o->value[0]);
            cli_json_double(&j, "fast_cpu_seconds", o->value[1]);
            cli_json_double(&j, "speedup", o->value[2]);
            if (o->warning[0])
                cli_json_string(&j, "warning", o->warning);
            else
                cli_json_null(&j, "warning");
        }
        cli_json_string(&j, "message", o->message);
        cli_json_string(&j, "detail", o->detail);
        if (o->replay[0])
            cli_json_string(&j, "replay", o->replay);
        else
            cli_json_null(&j, "replay");
        cli_json_end_object(&j);
    }
    cli_json_end_array(&j);
    cli_json_end_object(&j);
    cli_json_finish(&j);
}

int write_junit(const v_ctx *c)
{
    cli_junit_case *cases = calloc(c->n_checks ? c->n_checks : 1, sizeof *cases);
    char (*classes)[64] = calloc(c->n_checks ? c->n_checks : 1, sizeof *classes);
    char **texts = calloc(c->n_checks ? c->n_checks : 1, sizeof *texts);
    char (*outs)[700] = calloc(c->n_checks ? c->n_checks : 1, sizeof *outs);
    int rc = CLI_EXIT_USAGE;
    if (!cases || !classes || !texts || !outs) {
        fprintf(stderr, "sebt validate: error: out of memory for the JUnit report\n");
        goto done;
    }
    for (size_t i = 0; i < c->n_checks; i++) {
        const v_check *k = &c->checks[i];
        const v_outcome *o = &k->out;
        snprintf(classes[i], sizeof classes[i], "sebt.validate.%s", k->stage);
        size_t tlen = strlen(o->detail) + strlen(o->replay) + strlen(o->message) + 64;
        texts[i] = malloc(tlen);
        if (texts[i])
            snprintf(texts[i], tlen, "%s\n%s%s%s%s", o->message, o->detail, o->replay[0] ? "replay: " : "",
                     o->replay, o->replay[0] ? "\n" : "");
        static const cli_junit_outcome map[] = { CLI_JUNIT_PASSED, CLI_JUNIT_FAILURE, CLI_JUNIT_ERROR,
                                                 CLI_JUNIT_SKIPPED, CLI_JUNIT_ERROR };
        cases[i] = (cli_junit_case){ .classname = classes[i], .name = k->name, .seconds = o->seconds,
                                     .outcome = map[o->status], .message = o->message, .text = texts[i],
                                     .output = o->status == V_PASS ? check_summary(k, outs[i], sizeof outs[i]) : NULL };
    }
    char suite[300];
    snprintf(suite, sizeof suite, "sebt validate %s", c->cand->name);
    rc = cli_junit_write("validate", c->a->junit, suite, cases, c->n_checks);
done:
    if (texts)
        for (size_t i = 0; i < c->n_checks; i++)
            free(texts[i]);
    free(texts);
    free(outs);
    free(classes);
    free(cases);
    return rc;
}

static void md_cell(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '|')
            fputs("\\|", f);
        else if (*s == '\n')
            fputc(' ', f);
        else
            fputc(*s, f);
}

int write_markdown(const v_ctx *c, int code)
{
    FILE *f = cli_open_output("validate", c->a->markdown);
    if (!f)
        return CLI_EXIT_USAGE;
    char contract[64];
    cli_contract_text(&c->cand->contract, contract, sizeof contract);
    fprintf(f, "## sebt validate `%s` (%s): %s\n\n", c->cand->name, contract, code == 0 ? "PASS" : "FAIL");
    if (c->a->cases)
        fprintf(f, "Backend `%s`, fuzz seed %" PRIu64 " for %" PRIu64 " cases.\n\n", c->sel, c->a->seed, c->a->cases);
    else
        fprintf(f, "Backend `%s`, fuzz seed %" PRIu64 " for %g s.\n\n", c->sel, c->a->seed, c->a->time_s);
    char analysis[200];
    analysis_summary(c, analysis, sizeof analysis);
    fprintf(f, "%c%s.\n\n", analysis[0] - 'a' + 'A', analysis + 1);
    fputs("| stage | check | result | time (s) | notes |\n|---|---|---|---:|---|\n", f);
    for (size_t i = 0; i < c->n_checks; i++) {
        const v_check *k = &c->checks[i];
        char buf[700];
        fprintf(f, "| %s | ", k->stage);
        md_cell(f, k->name);
        fprintf(f, " | %s | %.2f | ", k->out.status == V_PASS ? (k->out.warning[0] ? "pass, **warning**" : "pass")
                                     : k->out.status == V_SKIP ? "skipped"
                                                               : status_names[k->out.status],
                k->out.seconds);
        md_cell(f, check_summary(k, buf, sizeof buf));
        fputs(" |\n", f);
    }
    for (size_t i = 0; i < c->n_checks; i++)
        if (c->checks[i].out.warning[0])
            fprintf(f, "\n**Warning** (%s %s): %s\n", c->checks[i].stage, c->checks[i].name, c->checks[i].out.warning);
    for (size_t i = 0; i < c->n_checks; i++) {
        const v_check *k = &c->checks[i];
        if (k->out.status == V_PASS || k->out.status == V_SKIP)
            continue;
        fprintf(f, "\n### %s %s: %s\n\n%s\n\n```\n%s%s%s```\n", k->stage, k->name, status_names[k->out.status],
                k->out.message, k->out.detail, k->out.replay[0] ? "replay: " : "", k->out.replay);
        if (k->out.replay[0])
            fputc('\n', f);
    }
    return cli_close_output(f) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}

void announce(const v_ctx *c, const v_check *k)
{
    if (c->a->json)
        return;
    char buf[700];
    printf("%-6s %-13s %-44s %7.1fs  %s\n", k->out.status == V_PASS ? "ok" : status_names[k->out.status],
           k->stage, k->name, k->out.seconds, check_summary(k, buf, sizeof buf));
    fflush(stdout);
}

