/* test_cpu_tmpdir.c: the cpu backend's build directories. A build killed with SIGKILL leaves its
 * tilec-cc-* directory behind; the next build removes those of processes that no longer exist
 * (and nothing else: a live process's, another pid namespace's until a day old, another user's,
 * symbolic links). */
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "tilec.h"

static char root[256];

static unsigned long long pid_namespace(void) {
  struct stat st;
  return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

/* root/name, a directory holding the two files a build writes; mtime `age` seconds ago. */
static void make_build_dir(const char *name, long age) {
  char path[512], file[600];
  snprintf(path, sizeof path, "%s/%s", root, name);
  if (mkdir(path, 0700) != 0) abort();
  for (int i = 0; i < 2; i++) {
    snprintf(file, sizeof file, "%s/%s", path, i ? "k.so" : "k.c");
    int fd = open(file, O_CREAT | O_WRONLY, 0600);
    if (fd < 0 || write(fd, "x", 1) != 1) abort();
    close(fd);
  }
  struct timespec t[2];
  clock_gettime(CLOCK_REALTIME, &t[0]);
  t[0].tv_sec -= age;
  t[1] = t[0];
  utimensat(AT_FDCWD, path, t, 0);
}

static bool present(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", root, name);
  struct stat st;
  return lstat(path, &st) == 0;
}

/* A pid that belonged to a process that has exited and been reaped. */
static pid_t dead_pid(void) {
  pid_t pid = fork();
  if (pid == 0) _exit(0);
  waitpid(pid, NULL, 0);
  return pid;
}

static size_t count_build_dirs(void) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -c '^tilec-cc-'", root);
  FILE *p = popen(cmd, "r");
  size_t n = 0;
  if (p) {
    if (fscanf(p, "%zu", &n) != 1) n = 0;
    pclose(p);
  }
  return n;
}

static const char *kernel_src =
    "import tilelang.language as T\n"
    "@T.prim_func\n"
    "def one(A: T.Tensor((8,), 'float32')):\n"
    "    with T.Kernel(1, threads=8) as bx:\n"
    "        for i in T.Parallel(8):\n"
    "            A[i] = 1.0\n";

static bool compile_once(void) {
  tilec_error err = {0};
  tilec_context_options o = {.flags = TILEC_CONTEXT_NO_DISK_CACHE | TILEC_CONTEXT_NO_MEMORY_CACHE};
  tilec_context *ctx = tilec_context_create(&o, &err);
  if (!ctx) return false;
  tilec_program *p = tilec_program_from_string(ctx, "one.py", kernel_src, strlen(kernel_src), &err);
  tilec_compile_options co = {0};
  co.target = "cpu";
  tilec_kernel *k = p ? tilec_compile(p, &co, &err) : NULL;
  if (!k) printf("  %s", err.rendered);
  bool ok = k != NULL;
  tilec_kernel_destroy(k);
  tilec_program_destroy(p);
  tilec_context_destroy(ctx);
  return ok;
}

TEST(stale_build_dirs_are_removed_by_the_next_build) {
  unsigned long long ns = pid_namespace();
  CHECK(ns != 0);
  long day = 24 * 60 * 60;
  pid_t dead = dead_pid();
  char killed[128], alive[128], foreign_new[128], foreign_old[128], link[128];
  snprintf(killed, sizeof killed, "tilec-cc-%llu-%ld-aaaaaa", ns, (long)dead);
  snprintf(alive, sizeof alive, "tilec-cc-%llu-%ld-bbbbbb", ns, (long)getpid());
  snprintf(foreign_new, sizeof foreign_new, "tilec-cc-%llu-%ld-cccccc", ns + 1, (long)dead);
  snprintf(foreign_old, sizeof foreign_old, "tilec-cc-%llu-%ld-dddddd", ns + 1, (long)dead);
  snprintf(link, sizeof link, "tilec-cc-%llu-%ld-link00", ns, (long)dead);
  make_build_dir(killed, 0);
  make_build_dir(alive, 0);
  make_build_dir(foreign_new, 0);
  make_build_dir(foreign_old, 2 * day);
  make_build_dir("tilec-cc-Ab12Cd", 2 * day); /* the unnamed form of earlier versions */
  make_build_dir("tilec-cc-Ef34Gh", 0);
  make_build_dir("other-dir", 2 * day);
  char target[512], path[512];
  snprintf(target, sizeof target, "%s/other-dir", root);
  snprintf(path, sizeof path, "%s/%s", root, link);
  CHECK(symlink(target, path) == 0);
  CHECK(compile_once());
  EXPECT(!present(killed));
  EXPECT(present(alive));
  EXPECT(present(foreign_new));
  EXPECT(!present(foreign_old));
  EXPECT(!present("tilec-cc-Ab12Cd"));
  EXPECT(present("tilec-cc-Ef34Gh"));
  EXPECT(present(link));
  EXPECT(present("other-dir/k.c")); /* not reached through the link */
  CHECK_INT(count_build_dirs(), 4);   /* alive, foreign_new, Ef34Gh, the link: the build left none */
}

int main(void) {
  snprintf(root, sizeof root, "/tmp/tilec-test-tmpdir-XXXXXX");
  if (!mkdtemp(root)) return 1;
  setenv("TMPDIR", root, 1);
  RUN(stale_build_dirs_are_removed_by_the_next_build);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) printf("  (could not remove %s)\n", root);
  return tc_t_failed ? 1 : 0;
}
