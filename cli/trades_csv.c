/* A combo's trades as CSV: `sebt run --format csv` and `sebt sweep
 * --trades DIR` write the same columns. Times come as epoch ms (exact,
 * for programs) and as ISO-8601 UTC (for people and spreadsheets),
 * appended so that readers of the older columns keep working. */
#include <inttypes.h>

#include "cli.h"

void cli_write_trades_csv(FILE *f, const sebt_series *s, const sebt_result *r)
{
    fputs("signal_index,entry_index,exit_index,signal_ts,entry_ts,exit_ts,entry_price,exit_price,"
          "stop,tp,risk,pnl,r,reason,bars_held,signal_time,entry_time,exit_time\n", f);
    for (size_t k = 0; k < r->n_trades && r->trades; k++) {
        const sebt_trade *t = &r->trades[k];
        const int64_t ts[3] = { s->ts[t->signal_index], s->ts[t->entry_index], s->ts[t->exit_index] };
        fprintf(f, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",", t->signal_index,
                t->entry_index, t->exit_index, ts[0], ts[1], ts[2]);
        const double v[] = { t->entry_price, t->exit_price, t->stop, t->tp, t->risk, t->pnl, t->r };
        for (size_t c = 0; c < sizeof v / sizeof v[0]; c++) {
            cli_print_double(f, v[c]);
            fputc(',', f);
        }
        fprintf(f, "%s,%d", sebt_exit_reason_name(t->reason), (int)t->bars_held);
        for (int c = 0; c < 3; c++) {
            char iso[40];
            cli_format_utc(ts[c], iso, sizeof iso);
            fprintf(f, ",%s", iso);
        }
        fputc('\n', f);
    }
}
