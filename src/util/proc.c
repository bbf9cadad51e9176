/* proc.c: running tools (the C compiler, nvcc) and the small file helpers around them.
 * Tools run with posix_spawnp: no shell, so nothing is quoted or interpreted. */
#include "util/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* Find an executable on PATH (or the path itself when it has a slash). */
bool tc_find_exe(const char *name, char *out, size_t cap) {
  if (strchr(name, '/')) {
    if (access(name, X_OK) != 0) return false;
    snprintf(out, cap, "%s", name);
    return true;
  }
  const char *path = getenv("PATH");
  if (!path || !*path) path = "/usr/bin:/bin";
  while (*path) {
    const char *c = strchr(path, ':');
    size_t n = c ? (size_t)(c - path) : strlen(path);
    if (n > 0 && n < cap) {
      snprintf(out, cap, "%.*s/%s", (int)n, path, name);
      struct stat st;
      if (stat(out, &st) == 0 && S_ISREG(st.st_mode) && access(out, X_OK) == 0) return true;
    }
    path += n + (c ? 1 : 0);
  }
  return false;
}

/* Runs argv with stdout and stderr into one pipe; returns the output (malloc'd) and the exit
 * status (-1 when it did not exit normally). errno-style failure: returns false. */
bool tc_run_capture(char *const *argv, char **output, int *status, int *spawn_errno) {
  *output = NULL;
  *status = -1;
  *spawn_errno = 0;
  int fds[2];
  if (pipe(fds) != 0) {
    *spawn_errno = errno;
    return false;
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    *spawn_errno = rc;
    return false;
  }
  size_t len = 0, cap = 4096;
  char *buf = malloc(cap);
  for (;;) {
    if (buf && len + 1024 > cap) {
      char *nb = cap < (64u << 20) ? realloc(buf, cap * 2) : NULL;
      if (nb) {
        buf = nb;
        cap *= 2;
      }
    }
    char tmp[1024];
    char *dst = buf && len + sizeof tmp <= cap ? buf + len : tmp;
    ssize_t n = read(fds[0], dst, sizeof tmp);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (dst != tmp) len += (size_t)n;
  }
  close(fds[0]);
  int ws;
  while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
  }
  *status = WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
  if (buf) buf[len] = 0;
  *output = buf;
  return true;
}

bool tc_write_file(const char *path, const void *data, size_t n) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return false;
  const char *p = data;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      close(fd);
      return false;
    }
    p += w;
    n -= (size_t)w;
  }
  return close(fd) == 0;
}

bool tc_read_file(const char *path, void **data, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return false;
  if (fseek(f, 0, SEEK_END) != 0) {
    fclose(f);
    return false;
  }
  long sz = ftell(f);
  rewind(f);
  if (sz < 0) {
    fclose(f);
    return false;
  }
  void *buf = malloc((size_t)sz + 1);
  if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
    free(buf);
    fclose(f);
    return false;
  }
  fclose(f);
  *data = buf;
  *n = (size_t)sz;
  return true;
}

/* A private temporary directory (mode 0700) under $TMPDIR or /tmp. */
bool tc_make_tmpdir(const char *prefix, char *out, size_t cap) {
  const char *t = getenv("TMPDIR");
  if (!t || !*t) t = "/tmp";
  if (snprintf(out, cap, "%s/%s-XXXXXX", t, prefix) >= (int)cap) return false;
  return mkdtemp(out) != NULL;
}
