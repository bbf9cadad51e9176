/* cli_tune.c: `tilec tune` and the configuration other commands take from it.
 *
 * A kernel written with TileLang's @autotune(configs=[...]) (or given --config lines) is
 * compiled once per configuration, on every core at once (NVRTC or cc: compiles are
 * independent), then each is run and timed on the target, one at a time, as `tilec run --bench`
 * times it. The fastest is stored under the disk cache's directory, keyed by the file's bytes,
 * the kernel, the target, the backend and the -D bindings, so that `tilec run` (and source,
 * compile, verify, ir) given the same options uses it; without a stored choice they use the
 * first configuration and say so. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api.h"
#include "cli.h"
#include "target/target.h"

/* Append the bindings of one configuration line ("NAME=VALUE NAME=VALUE") to o. */
static int add_config(cli_options *o, const char *line, char *why, size_t cap) {
  const char *p = line;
  while (*p) {
    while (*p == ' ') p++;
    if (!*p) break;
    const char *end = strchr(p, ' ');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    const char *eq = memchr(p, '=', n);
    if (!eq || eq == p) return snprintf(why, cap, "configuration '%s': '%.*s' is not NAME=VALUE", line, (int)n, p), -1;
    size_t kn = (size_t)(eq - p), vn = n - kn - 1;
    if (o->ndefines == CLI_MAX_DEFINES) return snprintf(why, cap, "configuration '%s': more than %d bindings", line, CLI_MAX_DEFINES), -1;
    if (kn >= sizeof o->define_names[0] || vn >= sizeof o->define_values[0])
      return snprintf(why, cap, "configuration '%s': a name or value is too long", line), -1;
    int i = o->ndefines++;
    memcpy(o->define_names[i], p, kn);
    o->define_names[i][kn] = 0;
    memcpy(o->define_values[i], eq + 1, vn);
    o->define_values[i][vn] = 0;
    o->defines[i].name = o->define_names[i];
    o->defines[i].value = o->define_values[i];
    p += n;
  }
  return 0;
}

/* Whether the line binds a name o already binds. */
static const char *bound_name(const cli_options *o, const char *line, char *name, size_t cap) {
  for (const char *p = line; *p;) {
    while (*p == ' ') p++;
    const char *eq = strchr(p, '=');
    if (!eq) break;
    snprintf(name, cap, "%.*s", (int)(eq - p), p);
    for (int i = 0; i < o->ndefines; i++)
      if (strcmp(o->defines[i].name, name) == 0) return name;
    const char *sp = strchr(eq, ' ');
    if (!sp) break;
    p = sp;
  }
  return NULL;
}

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
static uint64_t fnv_str(uint64_t h, const char *s) { return fnv(h, s ? s : "", (s ? strlen(s) : 0) + 1); }

/* The target and backend as they resolve ("auto" and no --target: cpu; no --backend: the target's
 * default), with the target's options: a choice tuned with --target cpu is the one a run whose
 * "auto" resolves to cpu uses. The strings as given when they do not parse (the compile then
 * reports them). */
static void canonical_target(const cli_options *o, char *target, size_t tcap, char *backend, size_t bcap) {
  snprintf(target, tcap, "%s", o->target ? o->target : "auto");
  snprintf(backend, bcap, "%s", o->backend ? o->backend : "");
  tc_target_spec spec;
  tilec_error err = {0};
  const tc_target *t = tc_target_spec_parse(o->target, &spec, &err) ? tc_target_find(spec.kind, &err) : NULL;
  if (!t) return;
  size_t n = (size_t)snprintf(target, tcap, "%s", t->name);
  for (int i = 0; i < spec.nopts && n < tcap; i++)
    n += (size_t)snprintf(target + n, tcap - n, ",%s=%s", spec.opts[i].key, spec.opts[i].value);
  if (!o->backend || !*o->backend || strcmp(o->backend, "auto") == 0) {
    const char *def = tc_target_default_backend(t->name);
    snprintf(backend, bcap, "%s", def ? def : "");
  }
}

/* <cache dir>/tune/<key>.txt for o's file, kernel, target, backend and bindings; NULL (nothing
 * stored) when there is no cache directory or the file cannot be read. */
static char *store_path(tilec_context *ctx, const cli_options *o) {
  FILE *f = fopen(o->file, "rb");
  if (!f) return NULL;
  uint64_t h = 14695981039346656037ull;
  char buf[8192];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) h = fnv(h, buf, n);
  fclose(f);
  char target[512], backend[64];
  canonical_target(o, target, sizeof target, backend, sizeof backend);
  h = fnv_str(fnv_str(fnv_str(h, o->kernel), target), backend);
  for (int i = 0; i < o->ndefines; i++) h = fnv_str(fnv_str(h, o->defines[i].name), o->defines[i].value);
  tilec_error err = {0};
  char *dir = tilec_cache_dir(ctx, &err);
  if (!dir) return NULL;
  size_t len = strlen(dir) + 64;
  char *path = malloc(len);
  if (path) snprintf(path, len, "%s/tune/%016llx.txt", dir, (unsigned long long)h);
  tilec_free(dir);
  return path;
}

/* The stored choice: "tilec tune 1\n<config>\n<median ms>\n"; anything else is not used. */
static int read_choice(const char *path, char *line, size_t cap) {
  FILE *f = path ? fopen(path, "r") : NULL;
  if (!f) return 0;
  char head[32] = "";
  int ok = fgets(head, sizeof head, f) && strcmp(head, "tilec tune 1\n") == 0 && fgets(line, (int)cap, f) != NULL;
  fclose(f);
  size_t n = ok ? strlen(line) : 0;
  if (!ok || n < 2 || line[n - 1] != '\n' || !strchr(line, '=')) return 0;
  line[n - 1] = 0;
  return 1;
}

/* Written whole or not at all: a temporary file renamed over the old choice. */
static int write_choice(const char *path, const char *line, double ms) {
  char dir[4096], tmp[4200];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash) return -1;
  *slash = 0;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) return -1;
  snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid());
  FILE *f = fopen(tmp, "w");
  if (!f) return -1;
  int ok = fprintf(f, "tilec tune 1\n%s\n%.6f\n", line, ms) > 0;
  ok &= fclose(f) == 0;
  if (!ok || rename(tmp, path) != 0) {
    remove(tmp);
    return -1;
  }
  return 0;
}

/* The configuration lines: --config, else the kernel's @autotune ("" when neither). */
static char *config_text(const cli_options *o, tilec_program *prog, tilec_error *err) {
  if (o->nconfigs == 0) { /* the library's text, as a copy this file frees with free() */
    char *lib = tilec_program_autotune_configs(prog, o->kernel, err), *t = lib ? strdup(lib) : NULL;
    tilec_free(lib);
    return t;
  }
  size_t len = 1;
  for (int i = 0; i < o->nconfigs; i++) len += strlen(o->configs[i]) + 1;
  char *t = malloc(len);
  if (!t) return NULL;
  t[0] = 0;
  for (int i = 0; i < o->nconfigs; i++) strcat(strcat(t, o->configs[i]), "\n");
  return t;
}

static int split_lines(char *text, char **lines, int cap) {
  int n = 0;
  for (char *p = text; *p && n < cap;) {
    char *nl = strchr(p, '\n');
    if (nl) *nl = 0;
    if (*p) lines[n++] = p;
    if (!nl) break;
    p = nl + 1;
  }
  return n;
}

/* Whether the file mentions autotune at all: a kernel without @autotune has no configurations,
 * and reading (parsing) the program twice would double the time of every command on a large file.
 * True when the file cannot be read: the command reports that. */
static bool mentions_autotune(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return true;
  static const char word[] = "autotune";
  const size_t len = sizeof word - 1;
  char buf[65536];
  size_t have = 0, n;
  bool found = false;
  while (!found && (n = fread(buf + have, 1, sizeof buf - have, f)) > 0) {
    have += n;
    found = memmem(buf, have, word, len) != NULL;
    size_t tail = have < len - 1 ? have : len - 1; /* the word may straddle two reads */
    memmove(buf, buf + have - tail, tail);
    have = tail;
  }
  fclose(f);
  return found;
}

int cli_apply_autotune(cli_options *o, int quiet) {
  if (!mentions_autotune(o->file)) return 0;
  tilec_error err = {0};
  tilec_context *ctx = tilec_context_create(NULL, &err);
  if (!ctx) return 0; /* the command reports it */
  tilec_program *prog = tilec_program_from_file(ctx, o->file, &err);
  char *text = prog ? tilec_program_autotune_configs(prog, o->kernel, &err) : NULL;
  int rc = 0;
  /* @autotune's configurations only supply the tuned parameters the command line leaves out.
   * When they cannot be evaluated (get_configs() builds a helper class tilec does not run),
   * the kernel may still have every value from -D, so it is a note: the compile names any
   * parameter that is then missing. */
  if (prog && !text && err.status != TILEC_ERROR_USAGE && !quiet && tilec_program_num_kernels(prog) > 0) {
    cli_note("@autotune's configurations are not used; evaluating them failed:");
    cli_print_rendered(&err);
  }
  char *lines[CLI_MAX_CONFIGS];
  int n = text ? split_lines(text, lines, CLI_MAX_CONFIGS) : 0;
  char name[128], chosen[4096] = "", why[512];
  if (!rc && n > 0 && !bound_name(o, lines[0], name, sizeof name)) {
    char *path = store_path(ctx, o);
    int stored = read_choice(path, chosen, sizeof chosen);
    free(path);
    if (!stored) snprintf(chosen, sizeof chosen, "%s", lines[0]);
    if (!quiet) {
      if (stored) cli_note("using the configuration 'tilec tune' chose for these options: %s", chosen);
      else
        cli_note("@autotune lists %d configuration%s; using the first (%s); 'tilec tune %s' times them "
                        "and keeps the fastest", n, n == 1 ? "" : "s", chosen, o->file);
    }
    if (add_config(o, chosen, why, sizeof why) != 0) {
      cli_error("%s", why);
      rc = CLI_EXIT_USAGE;
    }
  }
  tilec_free(text);
  tilec_program_destroy(prog);
  tilec_context_destroy(ctx);
  return rc;
}

/* ---- tune ---- */

typedef struct tune_item {
  cli_options o;
  const char *line;
  int compiled, ran;
  double compile_ms, median_ms;
  char error[1200];
} tune_item;

typedef struct tune_pool {
  tilec_program *prog;
  tune_item *items;
  int n, next, done;
  pthread_mutex_t mu;
  int tty;
} tune_pool;

static void progress(const tune_pool *P, const char *what, int done, int n) {
  if (!P->tty) return;
  int w = 30, fill = n ? done * w / n : w;
  fprintf(stderr, "\r%-10s [%.*s%*s] %d/%d", what, fill, "##############################", w - fill, "", done, n);
  if (done == n) fputc('\n', stderr);
  fflush(stderr);
}

static void *compile_worker(void *arg) {
  tune_pool *P = arg;
  for (;;) {
    pthread_mutex_lock(&P->mu);
    int i = P->next < P->n ? P->next++ : -1;
    pthread_mutex_unlock(&P->mu);
    if (i < 0) return NULL;
    tune_item *it = &P->items[i];
    tilec_compile_options co;
    cli_compile_options(&it->o, &co);
    tilec_error err = {0};
    tilec_kernel *k = tilec_compile(P->prog, &co, &err);
    if (k) {
      it->compiled = 1;
      it->compile_ms = tilec_kernel_compile_ms(k);
    } else {
      snprintf(it->error, sizeof it->error, "%s", err.message[0] ? err.message : "compile failed");
    }
    tilec_kernel_destroy(k);
    pthread_mutex_lock(&P->mu);
    progress(P, "compiling", ++P->done, P->n);
    pthread_mutex_unlock(&P->mu);
  }
}

/* Whether the target and backend can run kernels here at all, asked once before any configuration
 * is compiled: a missing driver or device is the same for every configuration. 0, or the exit
 * code after saying why. */
static int check_target_usable(tilec_context *ctx, const cli_options *o) {
  tilec_error err = {0};
  tc_target_spec spec;
  if (!tc_target_spec_parse(o->target, &spec, &err) || !tc_target_find(spec.kind, &err)) return cli_report(&err);
  const tc_backend *b = tc_backend_resolve(&ctx->env, spec.kind, o->backend, &err);
  if (!b) return cli_report(&err);
  char why[1024];
  if (strcmp(b->target, "cuda") == 0 && strcmp(b->name, "emu") != 0) { /* it compiles without a GPU, but runs on one */
    cli_gpu *g = cli_gpu_open(0, why, sizeof why);
    if (!g) {
      cli_error("cannot use the GPU: %s", why);
      return CLI_EXIT_TARGET;
    }
    cli_gpu_close(g);
  }
  if (strcmp(b->target, "metal") == 0 && strcmp(b->name, "emu") != 0) {
    int code;
    cli_mtl *m = cli_mtl_open(o->target, &code, why, sizeof why);
    if (!m) {
      cli_error("cannot use the Metal device: %s", why);
      return code;
    }
    cli_mtl_close(m);
  }
  return 0;
}

int cli_tune(const cli_options *o) {
  tilec_error err = {0};
  tilec_context *ctx = tilec_context_create(NULL, &err);
  if (!ctx) return cli_report(&err);
  int rc = 0;
  tune_item *items = NULL;
  char *text = NULL, *lines[CLI_MAX_CONFIGS];
  tilec_program *prog = tilec_program_from_file(ctx, o->file, &err);
  if (!prog) goto report;
  text = config_text(o, prog, &err);
  if (!text) goto report;
  int n = split_lines(text, lines, CLI_MAX_CONFIGS);
  if (n == 0) {
    cli_error("nothing to tune: the kernel has no @autotune(configs=[...]) and no --config was given");
    rc = CLI_EXIT_USAGE;
    goto done;
  }
  if ((rc = check_target_usable(ctx, o)) != 0) goto done;
  items = calloc((size_t)n, sizeof *items);
  if (!items) goto nomem;
  for (int i = 0; i < n; i++) {
    char name[128], why[512];
    if (bound_name(o, lines[i], name, sizeof name)) {
      cli_error("-D %s fixes a name the configurations tune (configuration %d: %s); drop one of them",
              name, i + 1, lines[i]);
      rc = CLI_EXIT_USAGE;
      goto done;
    }
    items[i].o = *o;
    items[i].line = lines[i];
    if (add_config(&items[i].o, lines[i], why, sizeof why) != 0) {
      cli_error("%s", why);
      rc = CLI_EXIT_USAGE;
      goto done;
    }
    /* the bindings now point into items[i].o's own arrays or into argv */
    for (int d = o->ndefines; d < items[i].o.ndefines; d++) {
      items[i].o.defines[d].name = items[i].o.define_names[d];
      items[i].o.defines[d].value = items[i].o.define_values[d];
    }
    for (int d = 0; d < o->ndefines; d++) items[i].o.defines[d].name = items[i].o.define_names[d];
  }
  /* compile every configuration, on every core */
  tune_pool P = {prog, items, n, 0, 0, PTHREAD_MUTEX_INITIALIZER, isatty(2)};
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int jobs = o->jobs > 0 ? o->jobs : cores > 0 ? (int)cores : 1;
  if (jobs > n) jobs = n;
  pthread_t th[64];
  if (jobs > 64) jobs = 64;
  int started = 0;
  for (int t = 1; t < jobs; t++)
    if (pthread_create(&th[started], NULL, compile_worker, &P) == 0) started++;
  compile_worker(&P);
  for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
  /* time them one at a time, as `tilec run --bench` does */
  int best = -1, ran = 0;
  for (int i = 0; i < n; i++) {
    tune_item *it = &items[i];
    if (it->compiled) {
      it->o.bench = 1;
      it->o.json = 0;
      it->o.measured_ms = &it->median_ms;
      int r = cli_run(&it->o);
      if (r == 0) {
        it->ran = 1;
        if (best < 0 || it->median_ms < items[best].median_ms) best = i;
      } else {
        snprintf(it->error, sizeof it->error, "%s (exit %d)", r == CLI_EXIT_VERIFY ? "verification failed" : "run failed", r);
      }
    }
    progress(&P, "timing", ++ran, n);
  }
  char *path = best >= 0 ? store_path(ctx, o) : NULL;
  int stored = path && write_choice(path, items[best].line, items[best].median_ms) == 0;
  if (o->json) {
    printf("{\"kernel\": ");
    cli_json_string(o->kernel ? o->kernel : tilec_program_num_kernels(prog) == 1 ? tilec_program_kernel_name(prog, 0) : "");
    printf(", \"target\": ");
    cli_json_string(o->target);
    printf(", \"configs\": [");
    for (int i = 0; i < n; i++) {
      printf("%s{\"config\": ", i ? ", " : "");
      cli_json_string(items[i].line);
      printf(", \"compile_ms\": ");
      cli_json_number(items[i].compiled ? items[i].compile_ms : NAN);
      printf(", \"median_ms\": ");
      cli_json_number(items[i].ran ? items[i].median_ms : NAN);
      printf(", \"ok\": %s", items[i].ran ? "true" : "false");
      if (!items[i].ran) printf(", \"error\": "), cli_json_string(items[i].error);
      printf("}");
    }
    printf("], \"best\": ");
    if (best >= 0) cli_json_string(items[best].line);
    else printf("null");
    printf(", \"stored\": %s}\n", stored ? "true" : "false");
  } else {
    printf("%-4s %-48s %12s %12s\n", "#", "configuration", "compile ms", "median ms");
    for (int i = 0; i < n; i++) {
      printf("%-4d %-48s ", i + 1, items[i].line);
      if (items[i].compiled) printf("%12.1f ", items[i].compile_ms);
      else printf("%12s ", "-");
      if (items[i].ran) printf("%12.4f%s\n", items[i].median_ms, i == best ? "  <- best" : "");
      else printf("%12s  %s\n", "-", items[i].error);
    }
    if (best >= 0) {
      printf("best: %s (median %.4f ms)%s\n", items[best].line, items[best].median_ms,
             stored ? "; stored: 'tilec run' with the same options uses it" : "; not stored (no cache directory)");
    }
  }
  free(path);
  if (best < 0) {
    cli_error("no configuration compiled and ran");
    rc = CLI_EXIT_PROGRAM;
  }
  goto done;
nomem:
  cli_error("out of memory");
  rc = CLI_EXIT_TARGET;
  goto done;
report:
  rc = cli_report(&err);
done:
  free(items);
  free(text);
  tilec_program_destroy(prog);
  tilec_context_destroy(ctx);
  return rc;
}
