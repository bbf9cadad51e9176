/* test_flat_chains.c: flat chains of binary operators (`a + b + c + ...`), which parse into
 * left-deep trees as deep as they are long. CPython takes thousands of terms; tilec stopped at 400
 * ("expression nested too deeply"). Now 10,000 terms read, dump, evaluate at compile time, and as
 * runtime values are cut into temporaries that every later recursive walk (passes, the interpreter,
 * the code generators) takes, also under AddressSanitizer; only a deep expression that cannot be
 * cut (a condition) is refused, with a located message. */
#include <stdlib.h>
#include <string.h>

#include "front/ast.h"
#include "harness.h"
#include "tilec.h"
#include "util/strbuf.h"

enum { TERMS = 10000 };

/* "TERM op TERM op ... TERM", TERMS times. */
static char *chain(const char *term, const char *op, int terms) {
  size_t n = (strlen(term) + strlen(op)) * (size_t)terms + 1;
  char *s = malloc(n), *p = s;
  for (int i = 0; i < terms; i++) p += sprintf(p, "%s%s", i ? op : "", term);
  return s;
}

static char *program(const char *fmt, const char *text) {
  size_t n = strlen(fmt) + strlen(text) + 1;
  char *s = malloc(n);
  snprintf(s, n, fmt, text);
  return s;
}

static tilec_context *ctx;

TEST(a_chain_of_10000_terms_reads_and_dumps) {
  char *c = chain("x", " - ", TERMS), *text = program("y = %s\n", c);
  tc_source src = {"chain.py", text, strlen(text)};
  tc_arena arena;
  tc_arena_init(&arena);
  tilec_error err = {0};
  tc_ast *m = tc_read(&arena, &src, &err);
  CHECK(m != NULL);
  tc_strbuf sb;
  tc_sb_init(&sb);
  tc_ast_dump(&sb, m);
  const char *dump = tc_sb_cstr(&sb);
  /* (module (= (y) (- (- ... (- x x) x ... ) x))): TERMS - 1 operators, innermost first */
  EXPECT(strstr(dump, "(- (- (- x x) x) x)") != NULL);
  size_t opens = 0;
  for (const char *p = dump; *p; p++) opens += *p == '(';
  EXPECT(opens >= TERMS - 1);
  tc_sb_free(&sb);
  tc_arena_free(&arena);
  free(c);
  free(text);
}

static const char kernel_fmt[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "S = %s\n"
    "@tilelang.jit\n"
    "def k(N=64):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), 'float32'), B: T.Tensor((N,), 'float32')):\n"
    "        with T.Kernel(1, threads=N) as bx:\n"
    "            for i in T.Parallel(N):\n"
    "                B[i] = A[i] + S\n"
    "    return main\n";

TEST(a_compile_time_chain_of_10000_terms_folds) {
  char *c = chain("1", " + ", TERMS), *text = program(kernel_fmt, c);
  tilec_error err = {0};
  tilec_program *p = tilec_program_from_string(ctx, "const_chain.py", text, strlen(text), &err);
  CHECK(p != NULL);
  tilec_compile_options o = {0};
  char *ir = tilec_program_ir(p, &o, 0, &err);
  if (!ir) printf("  %s", err.rendered);
  CHECK(ir != NULL);
  EXPECT(strstr(ir, "B[i] = A[i] + 1e+04") != NULL);
  tilec_free(ir);
  tilec_program_destroy(p);
  free(c);
  free(text);
}

static const char runtime_fmt[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "@tilelang.jit\n"
    "def k(N=64):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), 'float32'), B: T.Tensor((N,), 'float32')):\n"
    "        with T.Kernel(1, threads=N) as bx:\n"
    "            for i in T.Parallel(N):\n"
    "                B[i] = %s\n"
    "    return main\n";

/* Every walk after the evaluator: the target-independent passes, the interpreter, the cpu backend
 * (compiled and run), and the cuda and metal code generators. */
TEST(a_runtime_chain_of_10000_terms_runs_everywhere) {
  char *c = chain("A[i]", " + ", TERMS), *text = program(runtime_fmt, c);
  tilec_error err = {0};
  tilec_program *p = tilec_program_from_string(ctx, "runtime_chain.py", text, strlen(text), &err);
  CHECK(p != NULL);
  tilec_compile_options o = {0};
  char *ir = tilec_program_ir(p, &o, 1, &err);
  if (!ir) printf("  %s", err.rendered);
  CHECK(ir != NULL);
  EXPECT(strstr(ir, "chain") != NULL); /* cut into temporaries */
  tilec_free(ir);
  const char *targets[] = {"cuda,arch=sm_90a", "metal"};
  for (int t = 0; t < 2; t++) {
    o.target = targets[t];
    char *src = tilec_program_source(p, &o, TILEC_SOURCE_KERNEL_ONLY, &err);
    if (!src) printf("  %s: %s", targets[t], err.rendered);
    EXPECT(src != NULL);
    tilec_free(src);
  }
  o.target = "cpu";
  tilec_kernel *k = tilec_compile(p, &o, &err);
  if (!k) printf("  %s", err.rendered);
  CHECK(k != NULL);
  float a[64], b[64], r[64];
  for (int i = 0; i < 64; i++) a[i] = (float)(i % 4) * 0.25f, b[i] = r[i] = -1;
  int64_t shape[1] = {64};
  DLTensor ta = {a, {kDLCPU, 0}, 1, {kDLFloat, 32, 1}, shape, NULL, 0}, tb = ta, tr = ta;
  tb.data = b;
  tr.data = r;
  DLTensor *args[2] = {&ta, &tb}, *rargs[2] = {&ta, &tr};
  CHECK_INT(tilec_kernel_launch(k, args, 2, &err), TILEC_OK);
  CHECK_INT(tilec_kernel_run_reference(k, rargs, 2, &err), TILEC_OK);
  bool exact = true; /* sums of quarters up to 7500 are exact in float32 */
  for (int i = 0; i < 64; i++) exact &= b[i] == a[i] * TERMS && r[i] == b[i];
  EXPECT(exact);
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  free(c);
  free(text);
}

static const char condition_fmt[] =
    "import tilelang\n"
    "import tilelang.language as T\n"
    "@tilelang.jit\n"
    "def k(N=64):\n"
    "    @T.prim_func\n"
    "    def main(A: T.Tensor((N,), 'float32'), B: T.Tensor((N,), 'float32')):\n"
    "        with T.Kernel(1, threads=N) as bx:\n"
    "            for i in T.Parallel(N):\n"
    "                if %s > 0:\n"
    "                    B[i] = 1.0\n"
    "    return main\n";

TEST(a_deep_condition_is_refused_where_it_is) {
  char *c = chain("A[i]", " + ", 3000), *text = program(condition_fmt, c);
  tilec_error err = {0};
  tilec_program *p = tilec_program_from_string(ctx, "deep_if.py", text, strlen(text), &err);
  CHECK(p != NULL);
  tilec_compile_options o = {0};
  char *ir = tilec_program_ir(p, &o, 0, &err);
  EXPECT(ir == NULL);
  CHECK_INT(err.status, TILEC_ERROR_PROGRAM);
  CHECK_STR(err.message, "this expression nests more than 2000 operations deep; bind parts of it to names");
  CHECK_INT(err.line, 9);
  tilec_free(ir);
  tilec_program_destroy(p);
  free(c);
  free(text);
}

int main(void) {
  tilec_error err = {0};
  tilec_context_options o = {.flags = TILEC_CONTEXT_NO_DISK_CACHE};
  ctx = tilec_context_create(&o, &err);
  if (!ctx) {
    printf("FAIL context: %s\n", err.message);
    return 1;
  }
  RUN(a_chain_of_10000_terms_reads_and_dumps);
  RUN(a_compile_time_chain_of_10000_terms_folds);
  RUN(a_runtime_chain_of_10000_terms_runs_everywhere);
  RUN(a_deep_condition_is_refused_where_it_is);
  tilec_context_destroy(ctx);
  return tc_t_failed ? 1 : 0;
}
