/* cli.h: shared pieces of the tilec command-line driver. */
#ifndef TILEC_CLI_H
#define TILEC_CLI_H
#include "tilec.h"

enum { CLI_EXIT_PROGRAM = 1, CLI_EXIT_USAGE = 2, CLI_EXIT_VERIFY = 3, CLI_EXIT_TARGET = 4 };
enum { CLI_MAX_DEFINES = 64 };

typedef struct cli_options {
  const char *file, *kernel, *target, *backend, *load_dir, *save_dir, *perturb;
  unsigned long long seed;
  int verify, bench, json, kernel_only, lowered;
  int ndefines;
  tilec_define defines[CLI_MAX_DEFINES];
  char define_names[CLI_MAX_DEFINES][128];
} cli_options;

int cli_exit_code(tilec_status st);
int cli_report(const tilec_error *err); /* prints the diagnostic, returns the exit code */
void cli_compile_options(const cli_options *o, tilec_compile_options *co);
void cli_print_warning(tilec_context *ctx);
int cli_run(const cli_options *o);
int cli_backends(void);
int cli_cache(int argc, char **argv);
#endif
