/* JSON read through jansson (reports/json.c), as a small tree. Errors name
 * the input, line and column and say what jansson found. Numbers are
 * doubles; Google Benchmark's NaN, Infinity and -Infinity are accepted as
 * numbers too. A repeated member name keeps its last value. */
#ifndef SEBT_REPORTS_JSON_H
#define SEBT_REPORTS_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "sebt/types.h"

typedef enum {
    SEBT_JSON_NULL,
    SEBT_JSON_BOOL,
    SEBT_JSON_NUMBER,
    SEBT_JSON_STRING,
    SEBT_JSON_ARRAY,
    SEBT_JSON_OBJECT
} sebt_json_type;

typedef struct sebt_json sebt_json;

struct sebt_json {
    sebt_json_type type;
    bool boolean;
    double number;
    char *string;          /* UTF-8, NUL-terminated (an embedded \u0000 is refused) */
    size_t n;              /* items of an array or members of an object */
    sebt_json *items;
    char **keys;           /* object member names, n of them */
};

/* Parses text[0..len) as one JSON value; name is used in messages. */
sebt_status sebt_json_parse(const char *name, const char *text, size_t len, sebt_json **out,
                            sebt_error *err);
void sebt_json_free(sebt_json *v);

/* The member key of an object (the last one when repeated), or NULL. */
const sebt_json *sebt_json_get(const sebt_json *obj, const char *key);
/* The member as a string or number, or the fallback when absent or of
 * another type. */
const char *sebt_json_get_string(const sebt_json *obj, const char *key, const char *fallback);
double sebt_json_get_number(const sebt_json *obj, const char *key, double fallback);

#endif
