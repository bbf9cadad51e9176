/* warning.c: see warning.h. */
#include "util/warning.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tc_warning_init(tc_warning_slot *w) {
  pthread_mutex_init(&w->mu, NULL);
  w->text = NULL;
}

void tc_warning_destroy(tc_warning_slot *w) {
  pthread_mutex_destroy(&w->mu);
  free(w->text);
  w->text = NULL;
}

void tc_warn(tc_warning_slot *w, const char *fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&w->mu);
  if (!w->text) w->text = strdup(buf); /* out of memory: the warning is lost, nothing else */
  pthread_mutex_unlock(&w->mu);
}

char *tc_warning_take(tc_warning_slot *w) {
  pthread_mutex_lock(&w->mu);
  char *t = w->text;
  w->text = NULL;
  pthread_mutex_unlock(&w->mu);
  return t;
}
