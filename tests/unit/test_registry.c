/* test_registry.c: the execution-backend registry. "auto" follows the explicit defaults table
 * whatever order backends are listed in; unknown and unavailable backends are errors that
 * name the alternatives; the cuda/metal probes tell the truth about this machine. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "target/cuda/cuda.h"
#include "target/metal/metal.h"
#include "target/registry.h"
#include "util/diag.h"

static const tc_backend_env g_env = {.cc = "cc", .num_threads = 1};

/* ---- the built-in table ---- */
TEST(every_backend_is_listed) {
  static const char *const want[][2] = {
      {"cpu", "cc"}, {"cuda", "nvrtc"}, {"cuda", "nvcc"}, {"cuda", "emu"}, {"metal", "metal"}, {"metal", "metallib"}, {"metal", "emu"}};
  CHECK_INT(tc_backend_count(), 7);
  for (size_t i = 0; i < 7; i++) {
    const tc_backend *b = tc_backend_at(i);
    CHECK(b && b->available && b->description);
    CHECK_STR(b->target, want[i][0]);
    CHECK_STR(b->name, want[i][1]);
  }
  CHECK(tc_backend_at(7) == NULL);
  CHECK(tc_metal_emu_backend.flags & TC_BACKEND_HOST_TENSORS); /* the emulator runs on host memory */
  CHECK(!(tc_metal_emu_backend.flags & TC_BACKEND_IN_MEMORY)); /* its shared object is cached */
  CHECK(!(tc_cuda_nvrtc_backend.flags & TC_BACKEND_IN_MEMORY)); /* NVRTC's cubins go to the disk cache */
  CHECK(tc_metal_metal_backend.flags & TC_BACKEND_IN_MEMORY);
  CHECK(!(tc_cuda_nvcc_backend.flags & TC_BACKEND_IN_MEMORY));
  CHECK(!(tc_metal_metallib_backend.flags & TC_BACKEND_IN_MEMORY));
  CHECK(!(tc_backend_at(0)->flags & TC_BACKEND_IN_MEMORY)); /* cpu/cc builds a .so */
}

TEST(documented_defaults) {
  CHECK_STR(tc_target_default_backend("cpu"), "cc");
  CHECK_STR(tc_target_default_backend("cuda"), "nvrtc");
#ifdef __APPLE__
  CHECK_STR(tc_target_default_backend("metal"), "metal");
#else
  CHECK_STR(tc_target_default_backend("metal"), "emu"); /* no Metal: the emulator */
#endif
  CHECK_STR(tc_target_default_backend("auto"), "cc");
  CHECK_STR(tc_target_default_backend(NULL), "cc");
  CHECK(tc_target_default_backend("tpu") == NULL);
  /* The defaults table names only backends that exist. */
  const tc_backend_table *t = tc_backend_registry();
  CHECK_INT(t->ndefaults, 3);
  for (size_t i = 0; i < t->ndefaults; i++) {
    int found = 0;
    for (size_t j = 0; j < t->nbackends; j++)
      found += strcmp(t->backends[j]->target, t->defaults[i].target) == 0 &&
               strcmp(t->backends[j]->name, t->defaults[i].backend) == 0;
    CHECK_INT(found, 1);
  }
}

/* auto for every target the table names: cpu resolves to cc; cuda to nvrtc where it can run;
 * metal to the emulator off macOS (where a C++ compiler is), and the device backend refuses. */
TEST(auto_for_every_target) {
  tilec_error err = {0};
  const tc_backend *b = tc_backend_resolve(&g_env, "auto", "auto", &err);
  CHECK(b != NULL);
  CHECK_STR(b->target, "cpu");
  CHECK_STR(b->name, "cc");
  CHECK(tc_backend_resolve(&g_env, NULL, NULL, &err) == b);
  CHECK(tc_backend_resolve(&g_env, "cpu", NULL, &err) == b);
  CHECK(tc_backend_resolve(&g_env, "cpu", "cc", &err) == b);

  /* cuda resolves to nvrtc where a GPU is, and says why not elsewhere. */
  b = tc_backend_resolve(&g_env, "cuda", "auto", &err);
  const char *prefix = "backend 'nvrtc' of target 'cuda' is not available: ";
  if (b) CHECK_STR(b->name, "nvrtc");
  else CHECK(err.status == TILEC_ERROR_TARGET && strncmp(err.message, prefix, strlen(prefix)) == 0);
  tc_error_clear(&err);
  b = tc_backend_resolve(&g_env, "cuda", "nvcc", &err);
  prefix = "backend 'nvcc' of target 'cuda' is not available: ";
  if (b) CHECK_STR(b->name, "nvcc");
  else CHECK(strncmp(err.message, prefix, strlen(prefix)) == 0);
  tc_error_clear(&err);

#ifndef __APPLE__
  b = tc_backend_resolve(&g_env, "metal", NULL, &err);
  char why[256];
  if (tc_metal_emu_backend.available(&g_env, why, sizeof why)) CHECK(b == &tc_metal_emu_backend);
  else CHECK(b == NULL && err.status == TILEC_ERROR_TARGET);
  tc_error_clear(&err);
  /* the device backend is the simulated Metal device off macOS (docs/metal-runtime.md); it
   * runs kernels on the emulator, so it is available exactly when the emulator is */
  b = tc_backend_resolve(&g_env, "metal", "metal", &err);
  if (tc_metal_emu_backend.available(&g_env, why, sizeof why)) CHECK(b == &tc_metal_metal_backend);
  else CHECK(b == NULL && err.status == TILEC_ERROR_TARGET);
  tc_error_clear(&err);
  CHECK(tc_backend_resolve(&g_env, "metal", "metallib", &err) == NULL);
  CHECK_INT(err.status, TILEC_ERROR_TARGET);
  CHECK(strstr(err.message, "exists only on macOS"));
#endif
  tc_error_clear(&err);
}

TEST(unknown_names) {
  tilec_error err = {0};
  CHECK(tc_backend_resolve(&g_env, "tpu", NULL, &err) == NULL);
  CHECK_INT(err.status, TILEC_ERROR_USAGE);
  CHECK_STR(err.message, "unknown target 'tpu' (targets: cpu, cuda, metal)");
  tc_error_clear(&err);
  CHECK(tc_backend_resolve(&g_env, "cpu", "gcc", &err) == NULL);
  CHECK_INT(err.status, TILEC_ERROR_USAGE);
  CHECK_STR(err.message, "unknown backend 'gcc' for target 'cpu' (backends of cpu: cc)");
  tc_error_clear(&err);
  CHECK(tc_backend_resolve(&g_env, "cuda", "hip", &err) == NULL);
  CHECK_STR(err.message, "unknown backend 'hip' for target 'cuda' (backends of cuda: nvrtc, nvcc, emu)");
  tc_error_clear(&err);
}

/* The backends that can compile and run on this machine, "cuda/nvrtc, cuda/nvcc" on one with an
 * NVIDIA driver and "none" on one without: the list the registry's errors must name. Probed
 * backend by backend here, independently of the registry's own listing. */
static void usable_here(const tc_backend_env *env, char *out, size_t cap) {
  size_t len = 0;
  out[0] = 0;
  for (size_t i = 0; i < tc_backend_count(); i++) {
    const tc_backend *b = tc_backend_at(i);
    char why[256] = "";
    if (!b->generate || !b->available(env, why, sizeof why)) continue;
    len += (size_t)snprintf(out + len, cap - len, "%s%s/%s", len ? ", " : "", b->target, b->name);
  }
  if (!len) snprintf(out, cap, "none");
}

/* The real cpu backend with a compiler that does not exist: unavailable, and the error names
 * the backends that are available instead (none without a GPU; cuda's where the driver is). */
TEST(cpu_without_compiler) {
  tc_backend_env env = {.cc = "/nonexistent/tilec-cc", .num_threads = 1};
  tilec_error err = {0};
  CHECK(tc_backend_resolve(&env, "auto", NULL, &err) == NULL);
  CHECK_INT(err.status, TILEC_ERROR_TARGET);
  char usable[512], want[1024];
  usable_here(&env, usable, sizeof usable);
  CHECK(strstr(usable, "cpu/") == NULL); /* cc cannot be among them: its compiler is missing */
  snprintf(want, sizeof want,
           "backend 'cc' of target 'cpu' is not available: C compiler '/nonexistent/tilec-cc' not "
           "found: set CC or install gcc (available backends: %s)",
           usable);
  CHECK_STR(err.message, want);
  char *r = tc_backends_report(&env);
  CHECK(r && strstr(r, "\ncpu     cc        yes      no         C compiler '/nonexistent/tilec-cc' not found"));
  free(r);
}

/* ---- order independence ---- */
static tilec_status fake_generate(const tc_lowered *lw, tc_generated *out, tilec_error *err) {
  (void)lw, (void)out;
  tc_error(err, TILEC_ERROR_INTERNAL, "not called by these tests");
  return TILEC_ERROR_INTERNAL;
}
static bool yes(const tc_backend_env *env, char *why, size_t cap) {
  (void)env, (void)why, (void)cap;
  return true;
}
static bool no_frob(const tc_backend_env *env, char *why, size_t cap) {
  (void)env;
  snprintf(why, cap, "needs a frobnicator");
  return false;
}
static bool no_quiet(const tc_backend_env *env, char *why, size_t cap) {
  (void)env, (void)why, (void)cap;
  return false; /* says nothing: the registry supplies a reason */
}

static const tc_backend fa = {.target = "x", .name = "alpha", .available = yes, .generate = fake_generate};
static const tc_backend fb = {.target = "x", .name = "beta", .available = yes, .generate = fake_generate};
static const tc_backend fc = {.target = "x", .name = "gamma", .available = yes, .generate = fake_generate};
static const tc_backend fd = {.target = "y", .name = "delta", .available = no_frob, .generate = fake_generate};
static const tc_backend fe = {.target = "y", .name = "eps", .available = no_quiet, .generate = fake_generate};
static const tc_backend ff = {.target = "y", .name = "phi", .available = yes};
static const tc_default_backend fake_defaults[] = {{"y", "delta"}, {"x", "beta"}};

TEST(auto_ignores_listing_order) {
  const tc_backend *perm[6][3] = {{&fa, &fb, &fc}, {&fa, &fc, &fb}, {&fb, &fa, &fc},
                                  {&fb, &fc, &fa}, {&fc, &fa, &fb}, {&fc, &fb, &fa}};
  for (int p = 0; p < 6; p++) {
    const tc_backend *list[3] = {perm[p][0], perm[p][1], perm[p][2]};
    tc_backend_table t = {list, 3, fake_defaults, 2};
    tilec_error err = {0};
    const tc_backend *b = tc_backend_resolve_in(&t, &g_env, "x", "auto", &err);
    CHECK(b == &fb);
    CHECK(tc_backend_resolve_in(&t, &g_env, "x", NULL, &err) == &fb);
    CHECK(tc_backend_resolve_in(&t, &g_env, "x", "gamma", &err) == &fc);
  }
  /* The real backends listed backwards: the same defaults come out. */
  const tc_backend_table *reg = tc_backend_registry();
  const tc_backend *rev[8];
  for (size_t i = 0; i < reg->nbackends; i++) rev[i] = reg->backends[reg->nbackends - 1 - i];
  tc_backend_table t = {rev, reg->nbackends, reg->defaults, reg->ndefaults};
  CHECK_STR(tc_backend_table_default(&t, "cpu"), "cc");
  CHECK_STR(tc_backend_table_default(&t, "cuda"), "nvrtc");
  CHECK_STR(tc_backend_table_default(&t, "metal"), tc_target_default_backend("metal"));
  tilec_error err = {0};
  const tc_backend *b = tc_backend_resolve_in(&t, &g_env, "cuda", NULL, &err);
  const char *prefix = "backend 'nvrtc' of target 'cuda' is not available: ";
  if (b) CHECK_STR(b->name, "nvrtc"); /* not nvcc, listed first here */
  else CHECK(strncmp(err.message, prefix, strlen(prefix)) == 0);
  tc_error_clear(&err);
  b = tc_backend_resolve_in(&t, &g_env, NULL, NULL, &err);
  CHECK(b && strcmp(b->name, "cc") == 0);
}

TEST(unavailable_names_the_available) {
  const tc_backend *list[] = {&fa, &fb, &fc, &fd, &fe, &ff};
  tc_backend_table t = {list, 6, fake_defaults, 2};
  tilec_error err = {0};
  CHECK(tc_backend_resolve_in(&t, &g_env, "y", NULL, &err) == NULL);
  CHECK_INT(err.status, TILEC_ERROR_TARGET);
  CHECK_STR(err.message, "backend 'delta' of target 'y' is not available: needs a frobnicator "
                         "(available backends: x/alpha, x/beta, x/gamma; y/eps: not available; "
                         "y/phi: no code generator yet)");
  tc_error_clear(&err);
  CHECK(tc_backend_resolve_in(&t, &g_env, "y", "phi", &err) == NULL);
  CHECK_STR(err.message, "target 'y' has no code generator yet (backend phi: available here)");
  tc_error_clear(&err);
  const tc_backend *only_y[] = {&fd, &fe};
  tc_backend_table t2 = {only_y, 2, fake_defaults, 2};
  CHECK(tc_backend_resolve_in(&t2, &g_env, "y", "eps", &err) == NULL);
  CHECK_STR(err.message, "backend 'eps' of target 'y' is not available: not available "
                         "(available backends: none; y/delta: needs a frobnicator)");
  tc_error_clear(&err);
  CHECK(tc_backend_resolve_in(&t2, &g_env, "x", NULL, &err) == NULL);
  CHECK_STR(err.message, "unknown target 'x' (targets: y)");
  tc_error_clear(&err);
  CHECK(tc_backend_resolve_in(&t2, &g_env, "auto", NULL, &err) == NULL); /* auto is cpu */
  CHECK_STR(err.message, "unknown target 'cpu' (targets: y)");
  tc_error_clear(&err);
  static const tc_default_backend no_defaults[] = {{"x", "beta"}};
  tc_backend_table t3 = {only_y, 2, no_defaults, 1};
  CHECK(tc_backend_resolve_in(&t3, &g_env, "y", NULL, &err) == NULL);
  CHECK_INT(err.status, TILEC_ERROR_INTERNAL);
  CHECK_STR(err.message, "target 'y' has no default backend");
}

/* ---- the report ---- */
TEST(report_of_a_table) {
  const tc_backend *list[] = {&fd, &fa, &fb, &ff};
  tc_backend_table t = {list, 4, fake_defaults, 2};
  char *r = tc_backends_report_in(&t, &g_env);
  CHECK_STR(r,
            "target  backend  default  available  reason\n"
            "y       delta    yes      no         needs a frobnicator\n"
            "x       alpha    no       yes        -\n"
            "x       beta     yes      yes        -\n"
            "y       phi      no       yes        no code generator yet\n");
  free(r);
}

TEST(report_of_this_machine) {
  char *r = tc_backends_report(&g_env);
  CHECK(r);
  const char *head = "target  backend   default  available  reason\n";
  CHECK(strncmp(r, head, strlen(head)) == 0);
  int lines = 0; /* the table's; the facts lines after it read "target/backend key: value" */
  for (const char *p = r; *p; p = strchr(p, '\n') + 1) {
    const char *sp = strchr(p, ' '), *sl = strchr(p, '/');
    lines += !(sl && sp && sl < sp);
  }
  CHECK_INT(lines, 8);
  CHECK(strstr(r, "\ncuda    nvrtc     yes      ") != NULL);
  CHECK(strstr(r, "\ncuda    nvcc      no       ") != NULL);
  CHECK(strstr(r, "\ncuda    emu       no       ") != NULL); /* the emulator is never a default */
#ifndef __APPLE__
  char why[256];
  if (tc_metal_emu_backend.available(&g_env, why, sizeof why)) {
    CHECK(strstr(r, "\nmetal   metal     no       yes        -\n"));
    CHECK(strstr(r, "\nmetal/metal storage_mode: "));
  }
  CHECK(strstr(r, "\nmetal   metallib  no       no         the offline Metal compiler (xcrun metal) exists only on macOS"));
  CHECK(strstr(r, "\nmetal   emu       yes      "));
#endif
  printf("%s", r); /* the table on this machine, for the log */
  free(r);
}

/* The cuda probes against what this test finds itself. */
TEST(cuda_probe_is_honest) {
  char why[256] = "";
  void *drv = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!drv) {
    CHECK(!tc_cuda_nvrtc_backend.available(&g_env, why, sizeof why));
    CHECK(why[0] != 0);
    CHECK(!tc_cuda_nvcc_backend.available(&g_env, why, sizeof why));
    CHECK(why[0] != 0);
  } else {
    dlclose(drv);
  }
  /* TILEC_NVCC names the compiler; one that does not exist is reported as such. */
  setenv("TILEC_NVCC", "/nonexistent-tilec-dir/nvcc", 1);
  CHECK(!tc_cuda_nvcc_backend.available(&g_env, why, sizeof why));
  unsetenv("TILEC_NVCC");
  CHECK_STR(why, "nvcc not found (PATH, /usr/local/cuda/bin; or set TILEC_NVCC)");
}

int main(void) {
  RUN(every_backend_is_listed);
  RUN(documented_defaults);
  RUN(auto_for_every_target);
  RUN(unknown_names);
  RUN(cpu_without_compiler);
  RUN(auto_ignores_listing_order);
  RUN(unavailable_names_the_available);
  RUN(report_of_a_table);
  RUN(report_of_this_machine);
  RUN(cuda_probe_is_honest);
  TEST_MAIN_END();
}
