/* "Did you mean": the known name nearest a mistyped word (sebt/sebt.h). */
#include <stdlib.h>
#include <string.h>

#include "sebt/sebt.h"

/* Edits that turn a into b: insertions, deletions, substitutions and swaps
 * of two neighbours (the optimal string alignment distance), or more than
 * cap when that is all that matters. Names are short; longer words are
 * never near one. */
#define NEAREST_MAX_LEN 64

static size_t edits(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > NEAREST_MAX_LEN || lb > NEAREST_MAX_LEN)
        return cap + 1;
    size_t d[NEAREST_MAX_LEN + 1][NEAREST_MAX_LEN + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            if (d[i - 1][j] + 1 < best)
                best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best)
                best = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[la][lb];
}

int sebt_nearest_name(const char *word, const char *const *names, size_t n)
{
    if (!word)
        return -1;
    /* A typo is a slip of a key or two, not another word: one edit in a
     * word of up to 4 characters, two up to 8, three beyond. */
    size_t len = strlen(word);
    size_t cap = len <= 4 ? 1 : len <= 8 ? 2 : 3;
    int best = -1;
    size_t best_d = cap + 1;
    for (size_t i = 0; i < n; i++) {
        if (!names[i])
            continue;
        size_t d = edits(word, names[i], cap);
        if (d < best_d) {
            best_d = d;
            best = (int)i;
        }
    }
    return best;
}
