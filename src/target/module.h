/* module.h: the compiled module of one kernel: its generated source and the backend's loaded
 * artifact, reference counted (the in-memory cache shares one between kernels). */
#ifndef TILEC_TARGET_MODULE_H
#define TILEC_TARGET_MODULE_H

#include "target/target.h"

typedef struct tc_module {
  int refs; /* atomic */
  const tc_backend *backend;
  tc_generated gen;
  tc_loaded *mod;
} tc_module;

tc_module *tc_module_new(const tc_backend *be); /* one reference; NULL when out of memory */
void tc_module_retain(void *m);
void tc_module_release(void *m); /* unloads and frees with the last reference */

#endif
