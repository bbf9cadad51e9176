/* tmpdir.c: the temporary directories the cpu backend runs the C compiler in.
 *
 * A build removes its directory when it ends, but a process killed with SIGKILL (a timeout, the
 * OOM killer, ^C on a parent's process group) cannot, and such directories used to pile up in
 * /tmp. So each directory's name carries its process: tilec-cc-<pid namespace>-<pid>-XXXXXX, and
 * every build first removes those of processes that no longer exist. A pid only identifies a
 * process within its pid namespace (containers may share /tmp), so a directory of another
 * namespace, or of the older unnamed form, is removed only once it is a day old: no compile takes
 * that long. Only directories of this user are touched. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "target/cpu/cpu_internal.h"

enum { FOREIGN_STALE_AFTER_S = 24 * 60 * 60 };
static const char build_dir_prefix[] = "tilec-cc-";

static const char *tmp_root(void) {
  const char *t = getenv("TMPDIR");
  return t && *t ? t : "/tmp";
}

/* The inode of this process's pid namespace, 0 when unknown (no /proc). */
static unsigned long long pid_namespace(void) {
  struct stat st;
  return stat("/proc/self/ns/pid", &st) == 0 ? (unsigned long long)st.st_ino : 0;
}

/* Whether the build directory `name` (already known to be this user's) was left by a process
 * that no longer exists. */
static bool is_stale(const char *name, const struct stat *st, unsigned long long ns, time_t now) {
  unsigned long long their_ns;
  long pid;
  int used = 0;
  if (ns && sscanf(name + sizeof build_dir_prefix - 1, "%llu-%ld-%n", &their_ns, &pid, &used) == 2 && used > 0 &&
      their_ns == ns && pid > 0)
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
  return now - st->st_mtime > FOREIGN_STALE_AFTER_S;
}

/* The files a build leaves (the source, the shared object, the compiler's temporaries), then the
 * directory; nothing is followed through a symbolic link. */
static void remove_build_dir(int parent, const char *name) {
  int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return;
  }
  struct dirent *de;
  while ((de = readdir(d)) != NULL)
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) (void)unlinkat(fd, de->d_name, 0);
  closedir(d);
  (void)unlinkat(parent, name, AT_REMOVEDIR);
}

static void remove_stale_build_dirs(const char *root, unsigned long long ns) {
  DIR *d = opendir(root);
  if (!d) return;
  int fd = dirfd(d);
  time_t now = time(NULL);
  uid_t me = geteuid();
  struct dirent *de;
  while ((de = readdir(d)) != NULL) {
    struct stat st;
    if (strncmp(de->d_name, build_dir_prefix, sizeof build_dir_prefix - 1) != 0) continue;
    if (fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != me) continue;
    if (is_stale(de->d_name, &st, ns, now)) remove_build_dir(fd, de->d_name);
  }
  closedir(d);
}

bool tc_cpu_make_build_dir(char *out, size_t cap) {
  const char *root = tmp_root();
  unsigned long long ns = pid_namespace();
  remove_stale_build_dirs(root, ns);
  int n = snprintf(out, cap, "%s/%s%llu-%ld-XXXXXX", root, build_dir_prefix, ns, (long)getpid());
  if (n < 0 || (size_t)n >= cap) {
    errno = ENAMETOOLONG;
    return false;
  }
  return mkdtemp(out) != NULL;
}
