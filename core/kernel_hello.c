/* The kernel protocol's handshake (docs/kernel-protocol.md, HELLO): sebt
 * sends its version and the strategy's declaration (sebt/strategy.def: the
 * parameters a RUN carries, the feature columns FEATURE_COLUMNS answers
 * with, the signal's terms, each in order); the kernel answers HELLO_OK
 * with its name and contract, in a header of its own version. A kernel of
 * another version is never sent a request: the frames of another version
 * carry other parameters, which it could not read. */
#define _GNU_SOURCE
#include "kernel_internal.h"

#include <math.h>

/* Messages are built in fixed buffers; a very long command is cut in them,
 * never overflowed. */
#pragma GCC diagnostic ignored "-Wformat-truncation"

/* What the earlier versions' frames carried, for the message that refuses
 * a kernel of one. */
static const struct {
    unsigned version;
    int params, features;
} past_versions[] = { { 1, 15, 7 } };

void kp_version_text(unsigned version, char *out, size_t max)
{
    int o = snprintf(out, max, "speaks kernel protocol version %u; this sebt speaks version %d", version,
                     KP_VERSION);
    for (size_t i = 0; i < sizeof past_versions / sizeof past_versions[0]; i++)
        if (past_versions[i].version == version && o > 0 && (size_t)o < max)
            snprintf(out + o, max - (size_t)o, " (version %u's requests carry %d parameters and %d feature columns, "
                     "version %d's carry %d and %d: it cannot read them, so it is sent none; update the kernel, "
                     "docs/kernel-protocol.md: Versions)", version, past_versions[i].params,
                     past_versions[i].features, KP_VERSION, SEBT_N_PARAMS, SEBT_N_FEATURES);
}

/* ---- HELLO: the version and the declaration ------------------------------- */

/* A name as u16 length and bytes; returns the bytes it takes. */
static size_t put_name(unsigned char *p, const char *name)
{
    size_t n = strlen(name);
    if (p) {
        put_u16(p, (uint16_t)n);
        memcpy(p + 2, name, n);
    }
    return 2 + n;
}

/* The HELLO payload at p (NULL: only its size): u32 version, then the
 * parameters (name, u8 type, u8 role, u8 min_excluded, f64 min, f64
 * default), the feature columns (name) and the signal terms (name, u16
 * column, u8 cmp, u8 rhs kind, u16 rhs, i16 switch), each list after its
 * u16 count. */
static size_t put_declaration(unsigned char *p)
{
    size_t o = 4;
    if (p)
        put_u32(p, KP_VERSION);
    if (p)
        put_u16(p + o, SEBT_N_PARAMS);
    o += 2;
    for (int i = 0; i < SEBT_N_PARAMS; i++) {
        const sebt_param_info *pi = &sebt_param_table[i];
        o += put_name(p ? p + o : NULL, pi->name);
        if (p) {
            p[o] = (unsigned char)pi->type;
            p[o + 1] = (unsigned char)pi->role;
            p[o + 2] = pi->min_excluded ? 1 : 0;
            put_f64(p + o + 3, pi->min);
            put_f64(p + o + 11, pi->default_value);
        }
        o += 19;
    }
    if (p)
        put_u16(p + o, SEBT_N_FEATURES);
    o += 2;
    for (int c = 0; c < SEBT_N_FEATURES; c++)
        o += put_name(p ? p + o : NULL, sebt_feature_table[c].name);
    if (p)
        put_u16(p + o, SEBT_N_TERMS);
    o += 2;
    for (int t = 0; t < SEBT_N_TERMS; t++) {
        const sebt_term_info *ti = &sebt_term_table[t];
        o += put_name(p ? p + o : NULL, ti->name);
        if (p) {
            bool column = ti->rhs_column >= 0;
            put_u16(p + o, (uint16_t)ti->column);
            p[o + 2] = (unsigned char)ti->cmp;
            p[o + 3] = column ? 0 : 1;
            put_u16(p + o + 4, (uint16_t)(column ? ti->rhs_column : ti->rhs_param));
            put_u16(p + o + 6, (uint16_t)(int16_t)ti->enable);
        }
        o += 8;
    }
    return o;
}

/* Sends HELLO and reads the answer into k->in; the exchange is counted as
 * the kernel's start-up, apart from its requests. */
static sebt_status send_hello(kproc *k, unsigned *type, uint64_t *len, sebt_error *err)
{
    size_t plen = put_declaration(NULL);
    unsigned char *hello = malloc(KP_HEADER + plen);
    if (!hello)
        return sebt_fail(err, SEBT_ERR_NOMEM, "kernel %s: out of memory for its HELLO", k->quoted);
    put_header(hello, KP_HELLO, plen);
    put_declaration(hello + KP_HEADER);
    uint64_t requests = k->requests, round_trips = k->round_trips, bytes_out = k->bytes_out, bytes_in = k->bytes_in;
    double exchange_s = k->exchange_s;
    sebt_status st = kp_exchange(k, hello, KP_HEADER + plen, "HELLO", 4 + 8 + 2 * (2 + KP_MAX_TEXT), false, type,
                                 len, err);
    free(hello);
    k->handshake_s += k->exchange_s - exchange_s;
    k->requests = requests;
    k->round_trips = round_trips;
    k->bytes_out = bytes_out;
    k->bytes_in = bytes_in;
    k->exchange_s = exchange_s;
    return st;
}

/* ---- HELLO_OK: the kernel's name and contract ------------------------------ */

typedef struct {
    char name[65];
    uint32_t kind;
    double tol;
    const unsigned char *desc;
    size_t desc_len;
} hello_ok;

static bool name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '.';
}

/* Checks the HELLO_OK payload (len bytes at k->in + KP_HEADER) into h. */
static sebt_status read_hello_ok(kproc *k, uint64_t len, hello_ok *h, sebt_error *err)
{
    const unsigned char *p = k->in + KP_HEADER;
    if (len < 16)
        return kp_fault(k, err, "sent a HELLO_OK of %llu bytes (at least 16 expected)", (unsigned long long)len);
    h->kind = get_u32(p);
    h->tol = get_f64(p + 4);
    size_t name_len = get_u16(p + 12);
    if (14 + name_len + 2 > len)
        return kp_fault(k, err, "sent a HELLO_OK whose name runs past its end");
    h->desc_len = get_u16(p + 14 + name_len);
    h->desc = p + 16 + name_len;
    if (14 + name_len + 2 + h->desc_len != len)
        return kp_fault(k, err, "sent a HELLO_OK of %llu bytes for a name of %zu and a description of %zu bytes "
                        "(%zu expected)", (unsigned long long)len, name_len, h->desc_len, 16 + name_len + h->desc_len);
    if (name_len == 0 || name_len >= sizeof h->name)
        return kp_fault(k, err, "gave a name of %zu bytes (1 to 64 expected)", name_len);
    memcpy(h->name, p + 14, name_len);
    h->name[name_len] = '\0';
    for (size_t i = 0; i < name_len; i++)
        if (!name_char(h->name[i]))
            return kp_fault(k, err, "gave the name '%s' (letters, digits, '_', '-' and '.' only)", h->name);
    if (h->kind == 0) {
        if (h->tol != 0)
            return kp_fault(k, err, "declares an exact contract with tol %g (exact means tol 0)", h->tol);
    } else if (h->kind == 1) {
        if (!(h->tol > 0 && h->tol < 1))
            return kp_fault(k, err, "declares a tolerant contract with tol %g (expected 0 < tol < 1)", h->tol);
    } else {
        return kp_fault(k, err, "declares an unknown contract kind %u (0 exact, 1 tolerant)", h->kind);
    }
    return SEBT_OK;
}

sebt_status kp_handshake(kproc *k, sebt_error *err)
{
    unsigned type;
    uint64_t len;
    sebt_status st = send_hello(k, &type, &len, err);
    if (st)
        return st;
    if (type == KP_ERROR) {
        char text[SEBT_ERROR_MSG_MAX / 2];
        sebt_text_visible(k->in + KP_HEADER + 12, len > 12 ? (size_t)(len - 12) : 0, text, sizeof text);
        return kp_fault(k, err, "refused the handshake of kernel protocol version %d: %s", KP_VERSION, text);
    }
    if (type != KP_HELLO_OK)
        return kp_fault(k, err, "answered HELLO with a %s frame, not HELLO_OK", type_name(type));
    hello_ok h;
    st = read_hello_ok(k, len, &h, err);
    if (st)
        return st;
    if (k->name[0]) {
        /* A restart (in a forked child): the same kernel must come back. */
        if (strcmp(k->name, h.name) != 0 || (int)k->backend.contract.kind != (int)h.kind ||
            k->backend.contract.tol != h.tol)
            return kp_fault(k, err, "came back as '%s' with another contract than the first time ('%s')", h.name,
                            k->name);
        k->shook = true;
        return SEBT_OK;
    }
    snprintf(k->name, sizeof k->name, "%s", h.name);
    size_t dl = h.desc_len < sizeof k->description ? h.desc_len : sizeof k->description - 1;
    memcpy(k->description, h.desc, dl);
    k->description[dl] = '\0';
    k->backend.contract.kind = h.kind == 0 ? SEBT_CONTRACT_EXACT : SEBT_CONTRACT_TOLERANT;
    k->backend.contract.tol = h.tol;
    k->shook = true;
    return SEBT_OK;
}
