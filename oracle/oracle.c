/* PLACEHOLDER: replaced by the oracle. */
#include "sebt/sebt.h"
int sebt_oracle_placeholder(void);
int sebt_oracle_placeholder(void) { return 0; }
