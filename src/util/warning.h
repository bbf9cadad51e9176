/* warning.h: a thread-safe slot holding the first warning of a context until the caller
 * takes it (tilec_context_take_warning). Later warnings are dropped while one waits. */
#ifndef TILEC_UTIL_WARNING_H
#define TILEC_UTIL_WARNING_H

#include <pthread.h>

typedef struct tc_warning_slot {
  pthread_mutex_t mu;
  char *text; /* malloc'd; NULL when none waits */
} tc_warning_slot;

void tc_warning_init(tc_warning_slot *w);
void tc_warning_destroy(tc_warning_slot *w);
void tc_warn(tc_warning_slot *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *tc_warning_take(tc_warning_slot *w); /* the waiting warning (caller frees), or NULL */

#endif
