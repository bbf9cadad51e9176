/* registry.h: the backend table behind target.h's registry functions, exposed so tests can
 * resolve against tables in other orders (auto must follow the defaults table, never the order
 * backends are listed in). Library code uses the target.h functions. */
#ifndef TILEC_REGISTRY_H
#define TILEC_REGISTRY_H
#include "target/target.h"

typedef struct tc_default_backend {
  const char *target;
  const char *backend;
} tc_default_backend;

typedef struct tc_backend_table {
  const tc_backend *const *backends; /* listing order (what `tilec backends` prints) */
  size_t nbackends;
  const tc_default_backend *defaults; /* the documented default of each target */
  size_t ndefaults;
} tc_backend_table;

/* The built-in table: every backend tilec has, and the defaults {cpu: cc, cuda: nvrtc,
 * metal: metal}. */
const tc_backend_table *tc_backend_registry(void);

const char *tc_backend_table_default(const tc_backend_table *t, const char *target);
const tc_backend *tc_backend_resolve_in(const tc_backend_table *t, const tc_backend_env *env,
                                        const char *target, const char *backend, tilec_error *err);
char *tc_backends_report_in(const tc_backend_table *t, const tc_backend_env *env);
/* The same as one JSON object {"backends": [{target, backend, default, available, reason,
 * disk_cache, and each detail as a string member}]}. */
char *tc_backends_report_json_in(const tc_backend_table *t, const tc_backend_env *env);
/* Also declared in target.h (the registry's public side); repeated so this header stands alone. */
char *tc_backends_report(const tc_backend_env *env);

#endif
