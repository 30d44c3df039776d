/* PLACEHOLDER: replaced by the loader. */
#include "sebt/sebt.h"
sebt_status sebt_load_csv(const char *path, const sebt_load_opts *opts, sebt_series *out, sebt_error *err)
{ (void)opts; (void)out; return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "%s: loader not yet written", path); }
sebt_status sebt_load_csv_buffer(const char *name, const char *data, size_t len, const sebt_load_opts *opts,
                                 sebt_series *out, sebt_error *err)
{ (void)data; (void)len; (void)opts; (void)out; return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "%s: loader not yet written", name); }
sebt_status sebt_write_csv(const sebt_series *s, FILE *f, sebt_error *err)
{ (void)s; (void)f; return sebt_fail(err, SEBT_ERR_UNAVAILABLE, "not yet written"); }
