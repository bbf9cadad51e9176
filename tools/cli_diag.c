/* cli_diag.c: how the command line reports: "tilec: error:" and "tilec: note:" lines after
 * flushing standard output (so a table precedes the error that sums it up when both streams
 * share a pipe), and --timeout's watchdog for runs that cannot be stopped from inside. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api.h"
#include "cli.h"
#include "ir/interp.h"
#include "ir/walk.h"

static void vline(const char *kind, const char *fmt, va_list ap) {
  fflush(stdout);
  fprintf(stderr, "tilec: %s: ", kind);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vline("error", fmt, ap);
  va_end(ap);
}

void cli_note(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vline("note", fmt, ap);
  va_end(ap);
}

void cli_print_rendered(const tilec_error *err) {
  fflush(stdout);
  const char *text = err->rendered[0] ? err->rendered : "error: unknown failure\n";
  /* The library renders an error without a program location as "error: ..."; a located one
   * starts with its file:line:col, as a compiler's does, and stays so. */
  if (strncmp(text, "error: ", 7) == 0) fputs("tilec: ", stderr);
  fputs(text, stderr);
}

tilec_status cli_run_reference(const cli_options *o, tilec_kernel *k, DLTensor *const *args, size_t n,
                               tilec_error *err) {
  return tc_kernel_run_reference_within(k, args, n, o->timeout, err);
}

/* ---- the watchdog ---- */

struct cli_watchdog {
  double seconds;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool armed, stopping;
  struct timespec deadline; /* CLOCK_MONOTONIC */
  char message[sizeof(((tilec_error *)0)->rendered)];
};

static bool find_while(void *ctx, tc_stmt *s) {
  const tc_stmt **found = ctx;
  if (*found) return false;
  if (s->kind == TC_ST_WHILE) *found = s;
  return !*found;
}

/* What the watchdog says: the kernel, where it ran and, located at its runtime `while` when it
 * has one, that this loop may never end (a C compiler's form, with the source line and caret). */
static void timeout_message(cli_watchdog *w, const tilec_kernel *k, const char *where) {
  const tc_stmt *loop = NULL;
  if (k && k->ir) tc_visit_stmts(k->ir->body, find_while, &loop);
  char what[512];
  snprintf(what, sizeof what, "kernel '%s' did not finish within %g s %s (--timeout)", k ? k->ir->name : "?",
           w->seconds, where);
  tilec_error err = {0};
  if (loop) {
    tc_error_at(&err, TILEC_ERROR_TARGET, loop->loc, "%s; does the condition of this `while` ever become false?", what);
    snprintf(w->message, sizeof w->message, "%s", err.rendered);
  } else {
    snprintf(w->message, sizeof w->message, "tilec: error: %s\n", what);
  }
}

static void *watch(void *arg) {
  cli_watchdog *w = arg;
  pthread_mutex_lock(&w->mu);
  while (!w->stopping) {
    if (!w->armed) {
      pthread_cond_wait(&w->cv, &w->mu);
      continue;
    }
    if (pthread_cond_timedwait(&w->cv, &w->mu, &w->deadline) == 0 || !w->armed) continue;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    bool past = now.tv_sec > w->deadline.tv_sec ||
                (now.tv_sec == w->deadline.tv_sec && now.tv_nsec >= w->deadline.tv_nsec);
    if (!past) continue;
    /* The run cannot be interrupted (native code, fibers, a device): say why and end here. */
    fflush(stdout);
    fputs(w->message, stderr);
    fflush(stderr);
    _exit(CLI_EXIT_TARGET);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

cli_watchdog *cli_watchdog_start(double seconds) {
  if (seconds <= 0) return NULL;
  cli_watchdog *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->seconds = seconds;
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  pthread_cond_init(&w->cv, &attr);
  pthread_condattr_destroy(&attr);
  pthread_mutex_init(&w->mu, NULL);
  if (pthread_create(&w->thread, NULL, watch, w) != 0) {
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w);
    return NULL;
  }
  return w;
}

void cli_watchdog_arm(cli_watchdog *w, const tilec_kernel *k, const char *where) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  timeout_message(w, k, where);
  clock_gettime(CLOCK_MONOTONIC, &w->deadline);
  double whole = (double)(long long)w->seconds, frac = w->seconds - whole;
  w->deadline.tv_sec += (time_t)whole;
  w->deadline.tv_nsec += (long)(frac * 1e9);
  if (w->deadline.tv_nsec >= 1000000000L) {
    w->deadline.tv_sec++;
    w->deadline.tv_nsec -= 1000000000L;
  }
  w->armed = true;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

void cli_watchdog_disarm(cli_watchdog *w) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  w->armed = false;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
}

void cli_watchdog_stop(cli_watchdog *w) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  w->stopping = true;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  free(w);
}
