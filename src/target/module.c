/* module.c: what a backend's generate() produces, and the compiled module of one kernel
 * (generated source + loaded artifact) shared between the kernels the in-memory cache hands
 * one compile to. */
#include "target/module.h"

#include <stdlib.h>

void tc_generated_free(tc_generated *g) {
  if (!g) return;
  free(g->kernel_source);
  free(g->full_source);
  free(g->meta);
  free(g->explain);
  g->kernel_source = g->full_source = g->meta = g->explain = NULL;
}

tc_module *tc_module_new(const tc_backend *be) {
  tc_module *m = calloc(1, sizeof *m);
  if (m) {
    m->refs = 1;
    m->backend = be;
  }
  return m;
}

void tc_module_retain(void *p) { __atomic_add_fetch(&((tc_module *)p)->refs, 1, __ATOMIC_RELAXED); }

void tc_module_release(void *p) {
  tc_module *m = p;
  if (!m || __atomic_sub_fetch(&m->refs, 1, __ATOMIC_ACQ_REL) > 0) return;
  if (m->mod && m->backend->unload) m->backend->unload(m->mod);
  tc_generated_free(&m->gen);
  free(m);
}
