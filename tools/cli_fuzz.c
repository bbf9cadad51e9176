/* cli_fuzz.c: `tilec fuzz`: random TileLang programs (fuzz_gen.c) run on every target given, each
 * output compared with the reference interpreter's on the same inputs (those `tilec run --seed`
 * makes). A disagreement, a crash, a hang or a run-time error of a target is a finding: the
 * program is minimized (operations dropped, sizes shrunk, each candidate run again) and written
 * out as a ready regression test. A target that refuses a program with a diagnostic is counted
 * apart: a refusal is allowed, a wrong number is not.
 *
 * Each program runs in a child process (a crash or a hang of the compiler is a finding, not the
 * end of the run), several at once (--jobs). The parent only generates text and forks. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "dtype/dtype.h"
#include "fuzz_gen.h"

#define FZ_MAX_TARGETS 8

/* A target as the fuzzer names it: "TARGET[:BACKEND][:reverse]". */
typedef struct fz_target {
  char spec[96];
  char target[64], backend[16];
  bool reverse; /* emulator threads resumed from the last (TILEC_EMU_ORDER=reverse) */
  bool unavailable;
  long programs, refused, found;
} fz_target;

typedef struct fz_opts {
  unsigned long long seed;
  long count;
  double minutes;
  int jobs;
  bool minimize, verbose;
  const char *out_dir;
  int ntargets;
  fz_target targets[FZ_MAX_TARGETS];
  int timeout_s;
} fz_opts;

/* What a child reports for one target: ok, refused (a diagnostic), wrong (an output differs),
 * error (failed at run time), invalid (the reference itself failed: the generator's fault). */
typedef enum { FZ_OK, FZ_REFUSED, FZ_WRONG, FZ_ERROR, FZ_INVALID, FZ_UNAVAILABLE, FZ_CRASH, FZ_HANG } fz_verdict;
static const char *verdict_names[] = {"ok", "refused", "wrong", "error", "invalid", "unavailable", "crash", "hang"};

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool parse_target(const char *spec, fz_target *t) {
  memset(t, 0, sizeof *t);
  if (strlen(spec) >= sizeof t->spec) return false;
  snprintf(t->spec, sizeof t->spec, "%s", spec);
  char buf[96];
  snprintf(buf, sizeof buf, "%s", spec);
  char *save = NULL, *part = strtok_r(buf, ":", &save);
  if (!part) return false;
  snprintf(t->target, sizeof t->target, "%s", part);
  while ((part = strtok_r(NULL, ":", &save))) {
    if (strcmp(part, "reverse") == 0) t->reverse = true;
    else snprintf(t->backend, sizeof t->backend, "%s", part);
  }
  return true;
}

/* ---- the child: one program on some targets ---- */
typedef struct host_buf {
  DLTensor t;
  int64_t shape[8];
  tc_dtype dt;
  size_t nbytes;
  void *initial, *ref, *run;
} host_buf;

/* Report lines on fd: "T <target index> <verdict> <kernel> <detail>". */
static void report(int fd, int ti, fz_verdict v, int kernel, const char *detail) {
  char line[600];
  int n = snprintf(line, sizeof line, "T %d %s %d %.500s\n", ti, verdict_names[v], kernel, detail ? detail : "");
  for (char *c = line; c < line + n - 1; c++)
    if (*c == '\n') *c = ' ';
  if (write(fd, line, (size_t)n) < 0) _exit(70);
}

static void first_line(const char *msg, char *out, size_t cap) {
  size_t n = msg ? strnlen(msg, cap - 1) : 0;
  memcpy(out, msg ? msg : "", n);
  out[n] = 0;
  char *nl = strchr(out, '\n');
  if (nl) *nl = 0;
}

static void free_bufs(host_buf *b, size_t n) {
  for (size_t i = 0; b && i < n; i++) free(b[i].initial), free(b[i].ref), free(b[i].run);
  free(b);
}

/* Run kernel `kernel` of prog on every target (mask of indices) against the reference. */
/* Launch k on the run copies of the inputs: in place on the host, or through device memory for a
 * backend that runs on a device (cuda on a GPU, metal on a Mac). */
static tilec_status launch_on(tilec_context *ctx, tilec_kernel *k, host_buf *b, DLTensor **args, size_t np, tilec_error *err) {
  const char *target = tilec_kernel_target(k);
  if (strcmp(target, "cpu") == 0 || strcmp(tilec_kernel_backend(k), "emu") == 0) return tilec_kernel_launch(k, args, np, err);
  bool metal = strcmp(target, "metal") == 0;
  void **dev = calloc(np ? np : 1, sizeof *dev);
  DLTensor *t = calloc(np ? np : 1, sizeof *t);
  DLTensor **a = calloc(np ? np : 1, sizeof *a);
  tilec_status st = dev && t && a ? TILEC_OK : TILEC_ERROR_NOMEM;
  for (size_t i = 0; i < np && st == TILEC_OK; i++) {
    if (!(dev[i] = tilec_device_alloc(ctx, target, 0, b[i].nbytes, err))) st = err->status;
    else st = tilec_device_copy(ctx, target, 0, dev[i], b[i].run, b[i].nbytes, TILEC_COPY_HOST_TO_DEVICE, err);
    if (st == TILEC_OK) {
      t[i] = *args[i], t[i].data = dev[i], a[i] = &t[i];
      t[i].device = (DLDevice){metal ? kDLMetal : kDLCUDA, 0};
    }
  }
  if (st == TILEC_OK) st = tilec_kernel_launch(k, a, np, err);
  if (st == TILEC_OK) st = tilec_kernel_synchronize(k, NULL, err);
  for (size_t i = 0; i < np && st == TILEC_OK; i++)
    st = tilec_device_copy(ctx, target, 0, b[i].run, dev[i], b[i].nbytes, TILEC_COPY_DEVICE_TO_HOST, err);
  for (size_t i = 0; dev && i < np; i++) tilec_device_free(ctx, target, 0, dev[i]);
  free(dev), free(t), free(a);
  return st;
}

static void run_kernel(int fd, const fz_opts *o, tilec_context *ctx, tilec_program *prog, int kernel, unsigned mask,
                       unsigned long long seed) {
  char name[16], msg[520];
  snprintf(name, sizeof name, "k%d", kernel);
  tilec_error err = {0};
  tilec_compile_options co = {.kernel = name, .target = "cpu", .flags = TILEC_COMPILE_NO_CACHE};
  tilec_kernel *ref = tilec_compile(prog, &co, &err);
  if (!ref) {
    first_line(err.message, msg, sizeof msg);
    for (int t = 0; t < o->ntargets; t++)
      if (mask >> t & 1) report(fd, t, FZ_INVALID, kernel, msg);
    return;
  }
  size_t np = tilec_kernel_num_params(ref);
  host_buf *b = calloc(np ? np : 1, sizeof *b);
  DLTensor **args = calloc(np ? np : 1, sizeof *args);
  if (!b || !args) _exit(71);
  for (size_t i = 0; i < np; i++) {
    tilec_param_info pi;
    tilec_kernel_param(ref, i, &pi);
    tc_dtype_lookup(pi.dtype, &b[i].dt, NULL, 0);
    size_t numel = 1;
    for (int d = 0; d < pi.ndim && d < 8; d++) b[i].shape[d] = pi.shape[d], numel *= (size_t)pi.shape[d];
    b[i].nbytes = (numel * (size_t)tc_dtype_bits(b[i].dt) + 7) / 8;
    b[i].initial = malloc(b[i].nbytes + 1), b[i].ref = malloc(b[i].nbytes + 1), b[i].run = malloc(b[i].nbytes + 1);
    if (!b[i].initial || !b[i].ref || !b[i].run) _exit(71);
    cli_fill_random(b[i].dt, b[i].initial, numel, pi.name, seed);
    memcpy(b[i].ref, b[i].initial, b[i].nbytes);
    b[i].t = (DLTensor){.data = b[i].ref, .device = {kDLCPU, 0}, .ndim = pi.ndim, .dtype = pi.dl_dtype, .shape = b[i].shape};
    args[i] = &b[i].t;
  }
  if (tilec_kernel_run_reference(ref, args, np, &err) != TILEC_OK) {
    first_line(err.message, msg, sizeof msg);
    for (int t = 0; t < o->ntargets; t++)
      if (mask >> t & 1) report(fd, t, FZ_INVALID, kernel, msg);
    goto done;
  }
  for (int t = 0; t < o->ntargets; t++) {
    if (!(mask >> t & 1)) continue;
    const fz_target *tg = &o->targets[t];
    /* the parent learns which target a crash happened in from the last "B" line */
    char begin[32];
    int n = snprintf(begin, sizeof begin, "B %d %d\n", t, kernel);
    if (write(fd, begin, (size_t)n) < 0) _exit(70);
    if (tg->reverse) setenv("TILEC_EMU_ORDER", "reverse", 1);
    else unsetenv("TILEC_EMU_ORDER");
    tilec_compile_options to = {.kernel = name, .target = tg->target, .backend = tg->backend[0] ? tg->backend : NULL,
                                .flags = TILEC_COMPILE_NO_CACHE};
    tilec_error e2 = {0};
    tilec_kernel *k = tilec_compile(prog, &to, &e2);
    if (!k) {
      first_line(e2.message, msg, sizeof msg);
      /* a backend that cannot run here: the target is left out from then on */
      bool absent = e2.status == TILEC_ERROR_TARGET && (strstr(msg, "not available") || strstr(msg, "unavailable") ||
                                                         strstr(msg, "cannot load") || strstr(msg, "no CUDA") ||
                                                         strstr(msg, "no GPU") || strstr(msg, "unknown backend"));
      report(fd, t, absent ? FZ_UNAVAILABLE : FZ_REFUSED, kernel, msg);
      continue;
    }
    for (size_t i = 0; i < np; i++) memcpy(b[i].run, b[i].initial, b[i].nbytes), b[i].t.data = b[i].run;
    if (launch_on(ctx, k, b, args, np, &e2) != TILEC_OK) {
      first_line(e2.message, msg, sizeof msg);
      report(fd, t, FZ_ERROR, kernel, msg);
      tilec_kernel_destroy(k);
      continue;
    }
    fz_verdict v = FZ_OK;
    msg[0] = 0;
    for (size_t i = 0; i < np && v == FZ_OK; i++) {
      tilec_param_info pi;
      tilec_kernel_param(k, i, &pi);
      if (!pi.is_output) continue;
      DLTensor got = b[i].t, want = b[i].t;
      got.data = b[i].run, want.data = b[i].ref;
      tilec_compare c;
      if (tilec_compare_output(&got, &want, pi.rounds_through, pi.unordered_dims, &c, &e2) != TILEC_OK) _exit(71);
      if (!c.ok) {
        v = FZ_WRONG;
        snprintf(msg, sizeof msg, "'%s' differs from the reference: max_abs_err=%.3g cosine=%.6f", pi.name, c.max_abs_err,
                 c.cosine);
      }
    }
    report(fd, t, v, kernel, msg);
    tilec_kernel_destroy(k);
  }
done:
  tilec_kernel_destroy(ref);
  free_bufs(b, np);
  free(args);
}

static void child_main(int fd, const fz_opts *o, const char *text, unsigned mask, int only_kernel, unsigned long long seed) {
  tilec_error err = {0};
  tilec_context *ctx = tilec_context_create(NULL, &err);
  if (!ctx) _exit(72);
  tilec_program *prog = tilec_program_from_string(ctx, "fuzz.py", text, strlen(text), &err);
  if (!prog) {
    char msg[520];
    first_line(err.message, msg, sizeof msg);
    for (int t = 0; t < o->ntargets; t++)
      if (mask >> t & 1) report(fd, t, FZ_INVALID, 0, msg);
    exit(0);
  }
  int nk = (int)tilec_program_num_kernels(prog);
  for (int kidx = 0; kidx < nk; kidx++)
    if (only_kernel < 0 || only_kernel == kidx) run_kernel(fd, o, ctx, prog, kidx, mask, seed);
  tilec_program_destroy(prog);
  tilec_context_destroy(ctx);
  exit(0); /* not _exit: a --coverage build writes its counts at exit */
}

/* ---- the parent ---- */
typedef struct fz_result {
  fz_verdict v[FZ_MAX_TARGETS];
  int kernel[FZ_MAX_TARGETS];
  char detail[FZ_MAX_TARGETS][512];
} fz_result;

typedef struct fz_child {
  pid_t pid;
  int fd;
  unsigned long long seed;
  double started;
  char *buf;
  size_t len, cap;
} fz_child;

static pid_t spawn(const fz_opts *o, const char *text, unsigned mask, int only_kernel, unsigned long long seed, int *fd_out) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]), close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    close(fds[0]);
    alarm((unsigned)o->timeout_s);
    child_main(fds[1], o, text, mask, only_kernel, seed);
  }
  close(fds[1]);
  *fd_out = fds[0];
  return pid;
}

static void read_all(fz_child *c) {
  char tmp[4096];
  ssize_t n;
  while ((n = read(c->fd, tmp, sizeof tmp)) > 0) {
    if (c->len + (size_t)n + 1 > c->cap) {
      size_t cap = c->cap ? c->cap * 2 : 8192;
      while (cap < c->len + (size_t)n + 1) cap *= 2;
      char *nb = realloc(c->buf, cap);
      if (!nb) return;
      c->buf = nb, c->cap = cap;
    }
    memcpy(c->buf + c->len, tmp, (size_t)n);
    c->len += (size_t)n;
  }
  if (c->buf) c->buf[c->len] = 0;
}

/* The worst verdict per target from a child's lines and its exit status. */
static void parse_result(const fz_opts *o, fz_child *c, int status, unsigned mask, fz_result *r) {
  memset(r, 0, sizeof *r);
  for (int t = 0; t < o->ntargets; t++) r->v[t] = FZ_OK;
  int last_t = -1, last_k = 0;
  bool done[FZ_MAX_TARGETS] = {false};
  for (char *line = c->buf, *next; line && *line; line = next) {
    next = strchr(line, '\n');
    if (next) *next++ = 0;
    int t, k, off = 0;
    char verdict[32];
    if (sscanf(line, "B %d %d", &t, &k) == 2) {
      last_t = t, last_k = k;
      continue;
    }
    if (sscanf(line, "T %d %31s %d %n", &t, verdict, &k, &off) < 3 || t < 0 || t >= o->ntargets) continue;
    fz_verdict v = FZ_OK;
    for (int i = 0; i < 8; i++)
      if (strcmp(verdict, verdict_names[i]) == 0) v = (fz_verdict)i;
    if (t == last_t) last_t = -1;
    done[t] = true;
    if (v > r->v[t] || (v != FZ_OK && r->v[t] == FZ_OK)) {
      r->v[t] = v, r->kernel[t] = k;
      snprintf(r->detail[t], sizeof r->detail[t], "%s", off ? line + off : "");
    }
  }
  bool crashed = !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  if (crashed) {
    fz_verdict v = WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM ? FZ_HANG : FZ_CRASH;
    int t = last_t >= 0 ? last_t : -1;
    char why[96];
    if (WIFSIGNALED(status)) snprintf(why, sizeof why, "killed by signal %d%s", WTERMSIG(status), v == FZ_HANG ? " (time limit)" : "");
    else snprintf(why, sizeof why, "exited with status %d", WEXITSTATUS(status));
    for (int i = 0; i < o->ntargets; i++)
      if ((mask >> i & 1) && (i == t || (t < 0 && !done[i]))) {
        r->v[i] = v, r->kernel[i] = last_k;
        snprintf(r->detail[i], sizeof r->detail[i], "%s", why);
      }
  }
}

static bool is_finding(fz_verdict v) { return v == FZ_WRONG || v == FZ_ERROR || v == FZ_CRASH || v == FZ_HANG; }

/* Run one program to completion (the minimizer's test). */
static void run_once(const fz_opts *o, const char *text, unsigned mask, int only_kernel, unsigned long long seed, fz_result *r) {
  fz_child c = {0};
  c.pid = spawn(o, text, mask, only_kernel, seed, &c.fd);
  if (c.pid < 0) {
    memset(r, 0, sizeof *r);
    return;
  }
  read_all(&c);
  close(c.fd);
  int status = 0;
  while (waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  parse_result(o, &c, status, mask, r);
  free(c.buf);
}

/* Whether the program still fails target t the same way (same verdict). */
static bool still_fails(const fz_opts *o, const fz_program *p, int t, fz_verdict v, unsigned long long seed) {
  char *text = fz_render(p);
  if (!text) return false;
  fz_result r;
  run_once(o, text, 1u << t, -1, seed, &r);
  free(text);
  return r.v[t] == v;
}

/* Delta debugging, one element at a time to a fixpoint: the other kernels, then each operation,
 * then the sizes (smaller problems, then smaller blocks' worth of threads). */
static void minimize(const fz_opts *o, fz_program *p, int t, fz_verdict v, int kernel, unsigned long long seed) {
  if (p->nkernels > 1 && kernel < p->nkernels) {
    fz_program q = *p;
    q.k[0] = p->k[kernel];
    q.nkernels = 1;
    if (still_fails(o, &q, t, v, seed)) *p = q;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int ki = 0; ki < p->nkernels; ki++)
      for (int i = p->k[ki].nops - 1; i >= 0; i--) {
        if (p->k[ki].dropped[i]) continue;
        p->k[ki].dropped[i] = true;
        if (still_fails(o, p, t, v, seed)) changed = true;
        else p->k[ki].dropped[i] = false;
      }
  }
  for (int ki = 0; ki < p->nkernels; ki++) {
    fz_kernel *k = &p->k[ki];
    int64_t *dims[3] = {&k->M, &k->N, &k->K};
    int64_t blocks[3] = {k->BM, k->BN, k->BK};
    for (int d = 0; d < 3; d++) {
      int64_t keep = *dims[d];
      int64_t tries[3] = {1, blocks[d], blocks[d] + 1};
      for (int i = 0; i < 3; i++) {
        if (tries[i] >= keep) continue;
        *dims[d] = tries[i];
        if (still_fails(o, p, t, v, seed)) {
          keep = tries[i];
          break;
        }
        *dims[d] = keep;
      }
    }
    for (int th = 32; th < k->threads; th *= 2) {
      int keep = k->threads;
      k->threads = th;
      if (still_fails(o, p, t, v, seed)) break;
      k->threads = keep;
    }
  }
}

/* The reproducer: the minimized program with the command that shows the failure. */
static void write_reproducer(const fz_opts *o, const fz_program *p, int t, fz_verdict v, int kernel, const char *detail,
                             unsigned long long seed, char *path, size_t cap) {
  const fz_target *tg = &o->targets[t];
  char slug[96];
  snprintf(slug, sizeof slug, "%s%s%s%s", tg->target, tg->backend[0] ? "-" : "", tg->backend, tg->reverse ? "-reverse" : "");
  for (char *c = slug; *c; c++)
    if (*c == ',' || *c == '=' || *c == ':') *c = '_';
  mkdir(o->out_dir, 0777);
  snprintf(path, cap, "%s/fuzz_%llu_%s.py", o->out_dir, seed, slug);
  char *text = fz_render(p);
  FILE *f = text ? fopen(path, "w") : NULL;
  if (!f) {
    free(text);
    snprintf(path, cap, "(could not write %s/fuzz_%llu_%s.py: %s)", o->out_dir, seed, slug, strerror(errno));
    return;
  }
  fprintf(f, "# Found by `tilec fuzz --seed %llu --count 1 --targets %s`, minimized: %s on %s (%s).\n", seed, tg->spec,
          verdict_names[v], tg->spec, detail);
  fprintf(f, "# tilec-test: %s%s%s%s --kernel k%d --seed %llu\n", tg->reverse ? "TILEC_EMU_ORDER=reverse " : "",
          tg->target, tg->backend[0] ? " --backend " : "", tg->backend, p->nkernels > 1 ? kernel : 0, seed);
  fputs(text, f);
  fclose(f);
  free(text);
}

static void print_usage(FILE *to) {
  fputs("usage: tilec fuzz [--seed N] [--count N | --minutes M] [--jobs J] [--targets T,T...] [--out DIR]\n"
        "                  [--no-minimize] [--timeout S] [--verbose] [--print]\n"
        "\n"
        "Generate random TileLang programs, run each on every target and compare its outputs with\n"
        "the reference interpreter's on the inputs `tilec run --seed N` makes. A wrong result, a\n"
        "crash, a hang or a run-time error is minimized and written to DIR as a regression test.\n"
        "\n"
        "  --seed N        the first program's seed (default 1); program i has seed N + i\n"
        "  --count N       how many programs (default 100)\n"
        "  --minutes M     generate programs for M minutes instead of a count\n"
        "  --jobs J        programs run at once (default: the processors)\n"
        "  --targets LIST  TARGET[:BACKEND][:reverse], comma- or space-separated (default: cpu,\n"
        "                  the cuda and metal emulators in both configurations and orders, and\n"
        "                  cuda on a GPU when one is available)\n"
        "  --out DIR       where minimized reproducers go (default fuzz-findings)\n"
        "  --timeout S     seconds a program may take on all targets (default 120)\n"
        "  --print         print the program of --seed and stop\n"
        "  --verbose       a line for every program\n"
        "\n"
        "exit status: 0 no finding, 3 findings, 2 bad command line\n",
        to);
}

static bool add_target(fz_opts *o, const char *spec) {
  if (o->ntargets == FZ_MAX_TARGETS || !parse_target(spec, &o->targets[o->ntargets])) return false;
  o->ntargets++;
  return true;
}

static bool add_target_list(fz_opts *o, const char *list) {
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", list);
  char *save = NULL;
  for (char *s = strtok_r(buf, " ;", &save); s; s = strtok_r(NULL, " ;", &save))
    if (!add_target(o, s)) return false;
  return true;
}

static int parse_args(int argc, char **argv, fz_opts *o, bool *print_only) {
  *o = (fz_opts){.seed = 1, .count = 100, .jobs = (int)sysconf(_SC_NPROCESSORS_ONLN), .minimize = true,
                 .out_dir = "fuzz-findings", .timeout_s = 120};
  if (o->jobs < 1) o->jobs = 1;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      print_usage(stdout);
      return -1;
    }
    if (strcmp(a, "--no-minimize") == 0) { o->minimize = false; continue; }
    if (strcmp(a, "--verbose") == 0) { o->verbose = true; continue; }
    if (strcmp(a, "--print") == 0) { *print_only = true; continue; }
    if (!v) {
      fprintf(stderr, "tilec: error: fuzz: unknown option or missing value: %s\n", a);
      return 2;
    }
    i++;
    errno = 0;
    if (strcmp(a, "--seed") == 0) o->seed = strtoull(v, &end, 10);
    else if (strcmp(a, "--count") == 0) o->count = strtol(v, &end, 10);
    else if (strcmp(a, "--minutes") == 0) o->minutes = strtod(v, &end);
    else if (strcmp(a, "--jobs") == 0) o->jobs = (int)strtol(v, &end, 10);
    else if (strcmp(a, "--timeout") == 0) o->timeout_s = (int)strtol(v, &end, 10);
    else if (strcmp(a, "--out") == 0) { o->out_dir = v; continue; }
    else if (strcmp(a, "--targets") == 0 || strcmp(a, "--target") == 0) {
      if (!add_target_list(o, v)) {
        fprintf(stderr, "tilec: error: fuzz: bad or too many targets in '%s' (at most %d)\n", v, FZ_MAX_TARGETS);
        return 2;
      }
      continue;
    } else {
      fprintf(stderr, "tilec: error: fuzz: unknown option: %s\n", a);
      return 2;
    }
    if (errno || !end || *end || o->count < 0 || o->jobs < 1 || o->jobs > 256 || o->minutes < 0 || o->timeout_s < 1) {
      fprintf(stderr, "tilec: error: fuzz: bad value for %s: '%s'\n", a, v);
      return 2;
    }
  }
  if (!o->ntargets)
    add_target_list(o, "cpu cuda,arch=sm_80:emu cuda,arch=sm_90a:emu cuda,arch=sm_90a:emu:reverse metal "
                       "metal,metal4=1 cuda");
  return 0;
}

static void print_summary(const fz_opts *o, long programs, long findings, long invalid, double secs) {
  printf("fuzz: %ld programs in %.0f s, %ld findings, %ld invalid programs\n", programs, secs, findings, invalid);
  for (int t = 0; t < o->ntargets; t++) {
    const fz_target *x = &o->targets[t];
    if (x->unavailable) printf("  %-32s not available here\n", x->spec);
    else printf("  %-32s %ld run, %ld refused with a diagnostic, %ld findings\n", x->spec, x->programs - x->refused,
                x->refused, x->found);
  }
  fflush(stdout);
}

/* A finished program: tally, and minimize and write out each finding. */
static void settle(fz_opts *o, const fz_result *r, unsigned mask, unsigned long long seed, long *findings, long *invalid) {
  bool any = false, bad = false;
  for (int t = 0; t < o->ntargets; t++) {
    if (!(mask >> t & 1)) continue;
    fz_target *x = &o->targets[t];
    if (r->v[t] == FZ_UNAVAILABLE) {
      x->unavailable = true;
      continue;
    }
    x->programs++;
    if (r->v[t] == FZ_REFUSED) {
      x->refused++;
      if (o->verbose) printf("  seed %llu refused on %s: %s\n", seed, x->spec, r->detail[t]);
    }
    if (r->v[t] == FZ_INVALID && !bad) {
      bad = true;
      (*invalid)++;
      printf("FAIL fuzz seed %llu: the generator made a program the reference rejects: %s\n", seed, r->detail[t]);
    }
    if (!is_finding(r->v[t])) continue;
    any = true;
    x->found++;
    (*findings)++;
    fz_program p;
    fz_generate(seed, &p);
    char path[1200] = "(not written: --no-minimize)";
    if (o->minimize) {
      minimize(o, &p, t, r->v[t], r->kernel[t], seed);
      write_reproducer(o, &p, t, r->v[t], r->kernel[t], r->detail[t], seed, path, sizeof path);
    }
    printf("FAIL fuzz seed %llu on %s: %s, kernel k%d: %s; minimized to %d operations: %s\n", seed, x->spec,
           verdict_names[r->v[t]], r->kernel[t], r->detail[t], fz_live_ops(&p), path);
  }
  if (!any && !bad && o->verbose) printf("PASS fuzz seed %llu\n", seed);
  fflush(stdout);
}

int cli_fuzz(int argc, char **argv) {
  fz_opts o;
  bool print_only = false;
  int rc = parse_args(argc, argv, &o, &print_only);
  if (rc) return rc < 0 ? 0 : rc;
  if (print_only) {
    fz_program p;
    fz_generate(o.seed, &p);
    char *text = fz_render(&p);
    if (!text) return 4;
    fputs(text, stdout);
    free(text);
    return 0;
  }
  signal(SIGPIPE, SIG_IGN);
  fz_child *kids = calloc((size_t)o.jobs, sizeof *kids);
  if (!kids) return 4;
  double start = now_s(), last_progress = start;
  long started = 0, programs = 0, findings = 0, invalid = 0;
  int running = 0;
  for (;;) {
    bool more = o.minutes > 0 ? now_s() - start < o.minutes * 60 : started < o.count;
    unsigned mask = 0;
    for (int t = 0; t < o.ntargets; t++)
      if (!o.targets[t].unavailable) mask |= 1u << t;
    while (more && running < o.jobs) {
      unsigned long long seed = o.seed + (unsigned long long)started++;
      fz_program p;
      fz_generate(seed, &p);
      char *text = fz_render(&p);
      int slot = 0;
      while (kids[slot].pid) slot++;
      kids[slot] = (fz_child){.seed = seed, .started = now_s()};
      kids[slot].pid = text ? spawn(&o, text, mask, -1, seed, &kids[slot].fd) : -1;
      free(text);
      if (kids[slot].pid <= 0) {
        fprintf(stderr, "tilec: error: fuzz: cannot start a child process: %s\n", strerror(errno));
        free(kids);
        return 4;
      }
      running++;
      more = o.minutes > 0 ? now_s() - start < o.minutes * 60 : started < o.count;
    }
    if (!running) break;
    int status = 0;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int s = 0; s < o.jobs; s++) {
      if (kids[s].pid != pid) continue;
      read_all(&kids[s]);
      close(kids[s].fd);
      fz_result r;
      parse_result(&o, &kids[s], status, mask, &r);
      free(kids[s].buf);
      unsigned long long seed = kids[s].seed;
      kids[s] = (fz_child){0};
      running--;
      programs++;
      settle(&o, &r, mask, seed, &findings, &invalid);
    }
    if (now_s() - last_progress >= 20) {
      last_progress = now_s();
      printf("fuzz: %ld programs, %ld findings, %ld invalid (%.0f s)\n", programs, findings, invalid, last_progress - start);
      fflush(stdout);
    }
  }
  free(kids);
  print_summary(&o, programs, findings, invalid, now_s() - start);
  return findings || invalid ? 3 : 0;
}
