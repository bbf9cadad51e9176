/* proc.h: running external tools and reading/writing whole files (cpu's cc, cuda's nvcc). */
#ifndef TILEC_PROC_H
#define TILEC_PROC_H
#include <stdbool.h>
#include <stddef.h>

/* Find an executable on PATH (or the path itself when it has a slash) into out. */
bool tc_find_exe(const char *name, char *out, size_t cap);
/* Runs argv (argv[0] looked up on PATH) with stdin from /dev/null and stdout and stderr into
 * one pipe; *output is what it printed (malloc'd, may be NULL when memory ran out) and *status
 * its exit status (-1 when it did not exit normally). False when it could not be started
 * (*spawn_errno says why). */
bool tc_run_capture(char *const *argv, char **output, int *status, int *spawn_errno);
bool tc_write_file(const char *path, const void *data, size_t n); /* mode 0600 */
bool tc_read_file(const char *path, void **data, size_t *n);      /* malloc'd */
/* A private temporary directory (mode 0700) $TMPDIR/PREFIX-XXXXXX (or under /tmp). */
bool tc_make_tmpdir(const char *prefix, char *out, size_t cap);

#endif
