/* test_launch_args.c: DLPack arguments the launch must refuse before any kernel reads them: a
 * byte_offset that moves the tensor off the address space (it used to fault inside the generated
 * kernel) or splits an element (it used to read every value from the wrong bytes). Each is a usage
 * error with a message, the library prints nothing, and a correct byte_offset still works. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "tilec.h"

static const char *addone_src =
    "import tilelang.language as T\n"
    "@T.prim_func\n"
    "def addone(A: T.Tensor((4, 8), 'float32'), B: T.Tensor((4, 8), 'float32')):\n"
    "    with T.Kernel(1, threads=32) as bx:\n"
    "        for i, j in T.Parallel(4, 8):\n"
    "            B[i, j] = A[i, j] + 1.0\n";

typedef struct tensor {
  DLTensor t;
  int64_t shape[2];
} tensor;

static void make_tensor(tensor *x, float *data) {
  memset(x, 0, sizeof *x);
  x->shape[0] = 4;
  x->shape[1] = 8;
  x->t.data = data;
  x->t.device.device_type = kDLCPU;
  x->t.ndim = 2;
  x->t.shape = x->shape;
  x->t.dtype.code = kDLFloat;
  x->t.dtype.bits = 32;
  x->t.dtype.lanes = 1;
}

static tilec_kernel *compile_addone(tilec_context *ctx, tilec_error *err) {
  tilec_program *p = tilec_program_from_string(ctx, "addone.py", addone_src, strlen(addone_src), err);
  if (!p) return NULL;
  tilec_compile_options o = {0};
  o.target = "cpu";
  tilec_kernel *k = tilec_compile(p, &o, err);
  tilec_program_destroy(p);
  return k;
}

/* Standard output and error go to a file while `fn` runs; true when nothing was written. */
static bool prints_nothing(tilec_status (*fn)(tilec_kernel *, DLTensor *const *, size_t, tilec_error *),
                           tilec_kernel *k, DLTensor *const *args, tilec_error *err, tilec_status *st) {
  char path[] = "/tmp/tilec_launch_args_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) return false;
  fflush(stdout);
  fflush(stderr);
  int out = dup(1), errfd = dup(2);
  dup2(fd, 1);
  dup2(fd, 2);
  *st = fn(k, args, 2, err);
  fflush(stdout);
  fflush(stderr);
  dup2(out, 1);
  dup2(errfd, 2);
  close(out);
  close(errfd);
  off_t size = lseek(fd, 0, SEEK_END);
  close(fd);
  unlink(path);
  return size == 0;
}

static tilec_context *ctx;

TEST(huge_byte_offset_is_a_usage_error) {
  tilec_error err = {0};
  tilec_kernel *k = compile_addone(ctx, &err);
  CHECK(k != NULL);
  float a[32] = {0}, b[32];
  for (int i = 0; i < 32; i++) b[i] = 7;
  tensor ta, tb;
  make_tensor(&ta, a);
  make_tensor(&tb, b);
  ta.t.byte_offset = UINT64_C(1) << 62;
  DLTensor *args[2] = {&ta.t, &tb.t};
  tilec_status st;
  tilec_error e1 = {0};
  EXPECT(prints_nothing(tilec_kernel_launch, k, args, &e1, &st));
  CHECK_INT(st, TILEC_ERROR_USAGE);
  CHECK(strstr(e1.message, "argument 'A': byte_offset 4611686018427387904 puts its 32 elements past the end of the "
                           "address space") != NULL);
  tilec_error e2 = {0};
  EXPECT(prints_nothing(tilec_kernel_run_reference, k, args, &e2, &st));
  CHECK_INT(st, TILEC_ERROR_USAGE);
  CHECK_STR(e2.message, e1.message);
  ta.t.byte_offset = UINT64_MAX - 3; /* wraps around when added to the pointer */
  tilec_error e3 = {0};
  CHECK_INT(tilec_kernel_launch(k, args, 2, &e3), TILEC_ERROR_USAGE);
  CHECK(strstr(e3.message, "past the end of the address space") != NULL);
  bool untouched = true;
  for (int i = 0; i < 32; i++) untouched &= b[i] == 7;
  EXPECT(untouched);
  tilec_kernel_destroy(k);
}

TEST(byte_offset_inside_an_element_is_a_usage_error) {
  tilec_error err = {0};
  tilec_kernel *k = compile_addone(ctx, &err);
  CHECK(k != NULL);
  float a[33] = {0}, b[33];
  for (int i = 0; i < 33; i++) b[i] = 7;
  tensor ta, tb;
  make_tensor(&ta, a);
  make_tensor(&tb, b);
  tb.t.byte_offset = 2;
  DLTensor *args[2] = {&ta.t, &tb.t};
  tilec_status st;
  tilec_error e1 = {0};
  EXPECT(prints_nothing(tilec_kernel_launch, k, args, &e1, &st));
  CHECK_INT(st, TILEC_ERROR_USAGE);
  CHECK_STR(e1.message, "argument 'B': byte_offset 2 is not a multiple of its element size (4 bytes), so every "
                        "element would be read from the wrong bytes");
  tilec_error e2 = {0};
  EXPECT(prints_nothing(tilec_kernel_run_reference, k, args, &e2, &st));
  CHECK_INT(st, TILEC_ERROR_USAGE);
  bool untouched = true;
  for (int i = 0; i < 33; i++) untouched &= b[i] == 7;
  EXPECT(untouched);
  tilec_kernel_destroy(k);
}

TEST(aligned_byte_offset_still_runs) {
  tilec_error err = {0};
  tilec_kernel *k = compile_addone(ctx, &err);
  CHECK(k != NULL);
  float a[40], b[40];
  for (int i = 0; i < 40; i++) a[i] = (float)i, b[i] = -1;
  tensor ta, tb;
  make_tensor(&ta, a);
  make_tensor(&tb, b);
  ta.t.byte_offset = 8 * sizeof(float); /* the tensor starts at a[8] */
  tb.t.byte_offset = 4;                 /* ... and at b[1] */
  DLTensor *args[2] = {&ta.t, &tb.t};
  CHECK_INT(tilec_kernel_launch(k, args, 2, &err), TILEC_OK);
  EXPECT(b[0] == -1 && b[1] == 9 && b[32] == 40 && b[33] == -1);
  for (int i = 0; i < 40; i++) b[i] = -1;
  CHECK_INT(tilec_kernel_run_reference(k, args, 2, &err), TILEC_OK);
  EXPECT(b[0] == -1 && b[1] == 9 && b[32] == 40 && b[33] == -1);
  tilec_kernel_destroy(k);
}

int main(void) {
  tilec_error err = {0};
  tilec_context_options o = {.flags = TILEC_CONTEXT_NO_DISK_CACHE};
  ctx = tilec_context_create(&o, &err);
  if (!ctx) {
    printf("FAIL context: %s\n", err.message);
    return 1;
  }
  RUN(huge_byte_offset_is_a_usage_error);
  RUN(byte_offset_inside_an_element_is_a_usage_error);
  RUN(aligned_byte_offset_still_runs);
  tilec_context_destroy(ctx);
  return tc_t_failed ? 1 : 0;
}
