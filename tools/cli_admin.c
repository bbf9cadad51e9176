/* cli_admin.c: `tilec backends`, `tilec cache ls|stats|clear` and `tilec compile`. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_backends(const char *target, int json) {
  tilec_error err = {0};
  tilec_context *ctx = tilec_context_create(NULL, &err);
  if (!ctx) return cli_report(&err);
  char *text = tilec_backends_report_for(ctx, target, json, &err);
  int rc = 0;
  if (text) fputs(text, stdout);
  else rc = cli_report(&err);
  tilec_free(text);
  tilec_context_destroy(ctx);
  return rc;
}

int cli_cache(int argc, char **argv) {
  if (argc != 1 || (strcmp(argv[0], "ls") && strcmp(argv[0], "stats") && strcmp(argv[0], "clear"))) {
    cli_error("usage: tilec cache ls|stats|clear");
    return CLI_EXIT_USAGE;
  }
  tilec_error err = {0};
  tilec_context *ctx = tilec_context_create(NULL, &err);
  if (!ctx) return cli_report(&err);
  int rc = 0;
  if (strcmp(argv[0], "clear") == 0) {
    size_t n = 0;
    /* a directory that cannot be changed is a runtime failure (4), not a bad command line */
    if (tilec_cache_clear(ctx, &n, &err) != TILEC_OK) rc = err.status == TILEC_ERROR_IO ? (cli_report(&err), CLI_EXIT_TARGET) : cli_report(&err);
    else printf("removed %zu files\n", n);
  } else {
    char *out = NULL;
    if (tilec_cache_report(ctx, argv[0], &out, &err) != TILEC_OK) rc = cli_report(&err);
    else fputs(out, stdout);
    tilec_free(out);
  }
  tilec_context_destroy(ctx);
  return rc;
}

/* `tilec compile FILE -o OUT`: the artifact alone, written whole or not at all (a temporary
 * file renamed into place); through the kernel cache (a repeated compile builds nothing). */
int cli_compile(const cli_options *o) {
  tilec_error err = {0};
  tilec_context *ctx = tilec_context_create(NULL, &err);
  if (!ctx) return cli_report(&err);
  int rc = 0;
  void *bytes = NULL;
  size_t n = 0;
  tilec_program *prog = tilec_program_from_file(ctx, o->file, &err);
  tilec_compile_options co;
  cli_compile_options(o, &co);
  if (!prog || tilec_compile_artifact(prog, &co, &bytes, &n, &err) != TILEC_OK) {
    rc = cli_report(&err);
  } else {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", o->output, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    bool ok = f && fwrite(bytes, 1, n, f) == n;
    if (f && fclose(f) != 0) ok = false;
    if (ok && rename(tmp, o->output) != 0) ok = false;
    if (!ok) {
      cli_error("cannot write '%s': %s", o->output, strerror(errno));
      remove(tmp);
      rc = CLI_EXIT_USAGE;
    }
  }
  tilec_free(bytes);
  cli_print_warning(ctx);
  tilec_program_destroy(prog);
  tilec_context_destroy(ctx);
  return rc;
}
