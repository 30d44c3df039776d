/* JUnit XML, the report format CI systems read: one <testsuite> of
 * <testcase>s, each passed, failed (<failure>: a check found a problem),
 * in error (<error>: the check could not run, or the backend crashed) or
 * skipped. Written through cli_open_output, so a run that is interrupted
 * never leaves half a report. */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* The suite's timestamp is when this process started: every check a
 * JUnit file reports runs after that. */
static time_t started;
__attribute__((constructor)) static void note_start(void) { started = time(NULL); }

static void xml_text(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            /* XML 1.0 has no way to write other control characters. */
            if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
                fputc('?', f);
            else
                fputc(c, f);
        }
    }
}

int cli_junit_write(const char *cmd, const char *path, const char *suite, const cli_junit_case *cases,
                    size_t n)
{
    FILE *f = cli_open_output(cmd, path);
    if (!f)
        return CLI_EXIT_USAGE;
    size_t failures = 0, errors = 0, skipped = 0;
    double total = 0;
    for (size_t i = 0; i < n; i++) {
        failures += cases[i].outcome == CLI_JUNIT_FAILURE;
        errors += cases[i].outcome == CLI_JUNIT_ERROR;
        skipped += cases[i].outcome == CLI_JUNIT_SKIPPED;
        total += cases[i].seconds;
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"", f);
    xml_text(f, suite);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n", n,
            failures, errors, skipped, total);
    /* timestamp: ISO 8601 in UTC without a zone, as the JUnit schema has it. */
    char stamp[32] = "1970-01-01T00:00:00", host[256] = "localhost";
    struct tm tm;
    if (started && gmtime_r(&started, &tm))
        strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    if (gethostname(host, sizeof host) != 0 || !host[0])
        snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
    fputs("  <testsuite name=\"", f);
    xml_text(f, suite);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\" timestamp=\"%s\" "
               "hostname=\"", n, failures, errors, skipped, total, stamp);
    xml_text(f, host);
    fputs("\">\n", f);
    for (size_t i = 0; i < n; i++) {
        const cli_junit_case *c = &cases[i];
        fputs("    <testcase classname=\"", f);
        xml_text(f, c->classname);
        fputs("\" name=\"", f);
        xml_text(f, c->name);
        fprintf(f, "\" time=\"%.3f\"", c->seconds);
        if (c->outcome == CLI_JUNIT_PASSED && !(c->output && *c->output)) {
            fputs("/>\n", f);
            continue;
        }
        fputs(">\n", f);
        static const char *const tags[] = { NULL, "failure", "error", "skipped" };
        const char *tag = tags[c->outcome];
        if (tag) {
            fprintf(f, "      <%s message=\"", tag);
            xml_text(f, c->message);
            fputs("\"", f);
            if (c->outcome == CLI_JUNIT_SKIPPED || !(c->text && *c->text)) {
                fputs("/>\n", f);
            } else {
                fputs(">", f);
                xml_text(f, c->text);
                fprintf(f, "</%s>\n", tag);
            }
        }
        if (c->output && *c->output) {
            fputs("      <system-out>", f);
            xml_text(f, c->output);
            fputs("</system-out>\n", f);
        }
        fputs("    </testcase>\n", f);
    }
    fputs("  </testsuite>\n</testsuites>\n", f);
    return cli_close_output(f) ? CLI_EXIT_USAGE : CLI_EXIT_OK;
}
