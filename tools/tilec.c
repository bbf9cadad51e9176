/* tilec: the command-line driver.
 *
 *   tilec ir FILE [--kernel NAME] [-D NAME=VALUE]... [--lowered] [--list]
 *   tilec run FILE [--kernel NAME] [-D NAME=VALUE]... [--target T] [--backend B] [--verify]
 *             [--bench] [--seed N] [--load DIR] [--save DIR] [--json] [--timeout SECONDS]
 *   tilec source FILE [...] [--target T] [--backend B] [--kernel-only]
 *   tilec compile FILE -o OUT [...] [--target T] [--backend B]
 *   tilec backends [--json] [--target T]
 *   tilec cache ls|stats|clear
 *
 * Exit codes: 0 ok, 1 error in the program, 2 bad command line, 3 verification failed,
 * 4 target unavailable or runtime failure. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tilec.h"

static const char usage_text[] =
    "usage: tilec <command> [options]\n"
    "\n"
    "commands:\n"
    "  ir FILE        print the tile IR of a kernel\n"
    "  run FILE       compile and run a kernel on generated inputs\n"
    "  source FILE    print the generated code of a kernel\n"
    "  verify FILE    run a kernel on every available backend from the same inputs and\n"
    "                 compare each with the reference (one table; exit 3 on disagreement)\n"
    "  tune FILE      time a kernel's @autotune configurations (or --config ones) and keep\n"
    "                 the fastest for later runs with the same options\n"
    "  compile FILE -o OUT\n"
    "                 build a kernel's artifact without running it (cpu: the .so;\n"
    "                 cuda: the cubin, with NVRTC alone: no GPU needed)\n"
    "  backends       list execution backends and whether they are available here\n"
    "  cache ls|stats|clear\n"
    "                 inspect or empty the kernel cache\n"
    "  fuzz           run random programs on every target against the reference; minimize\n"
    "                 what disagrees into regression tests (tilec fuzz --help)\n"
    "\n"
    "options:\n"
    "  --kernel NAME      the kernel to use when FILE defines several\n"
    "  -D NAME=VALUE      bind a kernel parameter, T.const name, symbolic dimension or\n"
    "                     module-level constant\n"
    "                     (VALUE: an int, a float, True/False, or a word such as bfloat16)\n"
    "  --lowered          (ir) print the IR after the target-independent passes\n"
    "  --list             (ir) print the names of FILE's kernels, one a line\n"
    "  --target T         cpu, cuda, metal or auto (default auto: cpu); options may\n"
    "                     follow after commas: cuda,arch=sm_90a\n"
    "  --backend B        execution backend of the target (default: the target's default)\n"
    "  --verify           (run) compare every output with the reference interpreter\n"
    "                     (cuda: with the cpu backend's result on the same inputs)\n"
    "  --bench            (run) time repeated runs; print median, min, max\n"
    "                     (cuda: CUDA events, L2 flushed between runs)\n"
    "  -o OUT             (compile) where the artifact goes\n"
    "  --reference R      (verify) interp (the reference interpreter, default) or cpu\n"
    "  --seed N           (run) seed of the random inputs (default 0)\n"
    "  --timeout SECONDS  (run, verify) stop with exit 4 when one run of the kernel, or the\n"
    "                     reference, takes longer\n"
    "  --load DIR         (run) read inputs from DIR/NAME.npy where present\n"
    "  --save DIR         (run) write every tensor after the run to DIR/NAME.npy\n"
    "  --json             (run) print one JSON object on stdout\n"
    "  --perturb NAME     (run) testing aid: add 1 to element 0 of output NAME after the\n"
    "                     run, before verification, to see --verify fail\n"
    "  --kernel-only      (source) print the kernel without host code\n"
    "  --explain          (source) first the target's decisions (cuda, metal: the\n"
    "                     instruction or path of each T.gemm and why), as // comment lines\n"
    "  --help, --version  (tilec CMD --help: the help of one command)\n"
    "\n"
    "exit status: 0 ok, 1 error in the program, 2 bad command line, 3 verification failed,\n"
    "4 target unavailable or runtime failure\n";

/* Each command's own help: `tilec CMD --help`, `tilec CMD -h`, `tilec help CMD`. */
static const struct {
  const char *cmd, *text;
} command_help[] = {
    {"ir", "usage: tilec ir FILE [--kernel NAME] [-D NAME=VALUE]... [--lowered] [--list]\n"
           "\n"
           "Read FILE, evaluate one kernel with its bindings and print its tile IR.\n"
           "\n"
           "  --kernel NAME   the kernel to use when FILE defines several\n"
           "  -D NAME=VALUE   bind a kernel parameter, a T.const name, a symbolic dimension or a\n"
           "                  module-level constant (VALUE: int, float, True/False or a word such as bfloat16)\n"
           "  --lowered       print the IR after the target-independent passes\n"
           "  --list          print the names of FILE's kernels (factories, @tilelang.jit functions,\n"
           "                  @T.prim_func functions), one a line, and nothing else\n"},
    {"run", "usage: tilec run FILE [--kernel NAME] [-D NAME=VALUE]... [--target T] [--backend B]\n"
            "                 [--verify] [--bench] [--seed N] [--load DIR] [--save DIR] [--json]\n"
            "                 [--timeout SECONDS]\n"
            "\n"
            "Compile one kernel, run it on seeded random inputs and report.\n"
            "\n"
            "  --kernel NAME   the kernel to use when FILE defines several\n"
            "  -D NAME=VALUE   bind a parameter, T.const name, symbolic dimension or module constant\n"
            "  --target T      cpu, cuda[,arch=sm_XX], metal or auto (default auto: cpu)\n"
            "  --backend B     execution backend of the target (default: the target's default)\n"
            "  --verify        compare every output with the reference interpreter\n"
            "                  (cuda: with the cpu backend's result on the same inputs)\n"
            "  --bench         time repeated runs; print median, min, max and GFLOP/s or GB/s\n"
            "                  (cuda: CUDA events, L2 flushed between runs)\n"
            "  --seed N        seed of the random inputs (default 0)\n"
            "  --load DIR      read inputs from DIR/NAME.npy where present\n"
            "  --save DIR      write every tensor after the run to DIR/NAME.npy\n"
            "  --json          print one JSON object on stdout\n"
            "  --timeout SECONDS\n"
            "                  stop with exit 4 when the run (the first, not each --bench run) or the\n"
            "                  reference takes longer, naming the kernel's runtime `while` if it has one\n"
            "  --perturb NAME  testing aid: add 1 to element 0 of output NAME before verification\n"
            "Every option that takes a value may also be written --name=VALUE.\n"},
    {"source", "usage: tilec source FILE [--kernel NAME] [-D NAME=VALUE]... [--target T] [--backend B]\n"
               "                    [--kernel-only] [--explain]\n"
               "\n"
               "Print the code the target's backend generates for one kernel (no compiler runs).\n"
               "\n"
               "  --kernel NAME   the kernel to use when FILE defines several\n"
               "  -D NAME=VALUE   bind a parameter, T.const name, symbolic dimension or module constant\n"
               "  --target T      cpu, cuda[,arch=sm_XX], metal or auto (default auto: cpu)\n"
               "  --backend B     execution backend of the target\n"
               "  --kernel-only   print the kernel without host code\n"
               "  --explain       first the target's decisions (cuda, metal: each T.gemm's instruction or\n"
               "                  path and why)\n"},
    {"compile", "usage: tilec compile FILE -o OUT [--kernel NAME] [-D NAME=VALUE]... [--target T] [--backend B]\n"
                "\n"
                "Build one kernel's artifact without running it and write it to OUT (whole or not at all):\n"
                "the shared object for cpu, the cubin for cuda (NVRTC or nvcc only: no GPU needed).\n"
                "\n"
                "  -o OUT          where the artifact goes\n"
                "  --kernel NAME   the kernel to use when FILE defines several\n"
                "  -D NAME=VALUE   bind a parameter, T.const name, symbolic dimension or module constant\n"
                "  --target T      cpu, cuda[,arch=sm_XX], metal or auto\n"
                "  --backend B     execution backend of the target\n"},
    {"verify", "usage: tilec verify FILE [--kernel NAME] [-D NAME=VALUE]... [--seed N] [--reference interp|cpu] [--json]\n"
               "                    [--timeout SECONDS]\n"
               "\n"
               "Run one kernel on every execution backend available here (from the library's registry),\n"
               "from the same seeded inputs, and compare every output with one reference: the reference\n"
               "interpreter (float64; default) or the cpu backend (--reference cpu, for sizes the\n"
               "interpreter is slow on). Prints one table: backend, output, max_abs, max_rel, cosine,\n"
               "argmax agreement, ok; then the backends that failed or were skipped, with the reason.\n"
               "Exit 3 when any backend disagrees, 4 when an available backend failed to run.\n"
               "\n"
               "  --kernel NAME   the kernel to use when FILE defines several\n"
               "  -D NAME=VALUE   bind a parameter, T.const name, symbolic dimension or module constant\n"
               "  --seed N        seed of the random inputs (default 0)\n"
               "  --reference R   interp (default) or cpu\n"
               "  --json          print one JSON object on stdout\n"
               "  --timeout SECONDS\n"
               "                  stop with exit 4 when one backend's run or the reference takes longer\n"
               "  --perturb NAME  testing aid: add 1 to element 0 of output NAME of every backend\n"},
    {"tune", "usage: tilec tune FILE [--kernel NAME] [-D NAME=VALUE]... [--target T] [--backend B]\n"
             "                  [--config \"NAME=VALUE ...\"]... [--jobs N] [--verify] [--seed N] [--json]\n"
             "\n"
             "Compile every configuration of the kernel's @autotune(configs=[...]) (or the --config\n"
             "lines instead) on every core, run each on seeded random inputs and time it as\n"
             "'tilec run --bench' does, print one row per configuration, and store the fastest under the\n"
             "cache directory for these options (file, kernel, target, backend, -D bindings): 'tilec run'\n"
             "and the other commands then use it. Without a stored choice they use the first configuration\n"
             "(a note says so); binding a tuned name with -D turns the choice off.\n"
             "\n"
             "  --config LINE   a configuration, NAME=VALUE words (repeat for each; replaces @autotune's)\n"
             "  --jobs N        compile with N threads (default: every core)\n"
             "  --verify        check every configuration's result; one that fails is not chosen\n"
             "  --json          one JSON object: every configuration's compile and median time, the best\n"},
    {"backends", "usage: tilec backends [--json] [--target T]\n\nList the execution backends, the default of each target, and whether\n"
                 "each is available on this machine (and why not), then what each available backend\n"
                 "reports about itself (metal: the device, the storage mode in force and where it\n"
                 "came from, the MSL version and why).\n"
                 "\n"
                 "  --json      one JSON object instead of the table\n"
                 "  --target T  take T's options into account (metal,storage_mode=shared)\n"},
    {"cache", "usage: tilec cache ls|stats|clear\n"
              "\n"
              "  ls      list the entries of the disk kernel cache\n"
              "  stats   the directory, entry count, size, limit and whether it is enabled\n"
              "  clear   remove every entry (exit 4 when the directory cannot be changed)\n"
              "\n"
              "The directory is $TILEC_CACHE_DIR, else $XDG_CACHE_HOME/tilec, else ~/.cache/tilec;\n"
              "TILEC_DISABLE_CACHE=1 turns it off, TILEC_CACHE_MAX_MB sets its size limit.\n"},
};

static const char *help_of(const char *cmd) {
  for (size_t i = 0; i < sizeof command_help / sizeof command_help[0]; i++)
    if (strcmp(command_help[i].cmd, cmd) == 0) return command_help[i].text;
  return NULL;
}

static bool is_help_flag(const char *a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }

static int usage_error(const char *fmt, const char *arg) {
  fflush(stdout);
  fprintf(stderr, "tilec: error: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(see 'tilec --help')\n");
  return CLI_EXIT_USAGE;
}

int cli_exit_code(tilec_status st) {
  switch (st) {
  case TILEC_OK: return 0;
  case TILEC_ERROR_PROGRAM: return CLI_EXIT_PROGRAM;
  case TILEC_ERROR_USAGE: return CLI_EXIT_USAGE;
  case TILEC_ERROR_IO: return CLI_EXIT_USAGE;
  case TILEC_ERROR_VERIFY: return CLI_EXIT_VERIFY;
  default: return CLI_EXIT_TARGET;
  }
}

int cli_report(const tilec_error *err) {
  cli_print_rendered(err);
  return cli_exit_code(err->status);
}

/* Options that take a value, written "--name VALUE" or "--name=VALUE" (getopt_long's two forms). */
static const char *const valued_options[] = {"--kernel", "--target",    "--backend", "--load", "--save", "--perturb",
                                             "--reference", "--config", "--jobs",    "--seed", "--timeout", "-o"};
static const char *const flag_options[] = {"--verify", "--bench", "--json", "--kernel-only", "--explain", "--lowered",
                                           "--list"};

static bool is_one_of(const char *name, const char *const *names, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(name, names[i]) == 0) return true;
  return false;
}

/* Stores one option's value; 0, or the exit code of a bad value. */
static int set_valued_option(cli_options *o, const char *name, const char *v) {
  if (strcmp(name, "--kernel") == 0) o->kernel = v;
  else if (strcmp(name, "--target") == 0) o->target = v;
  else if (strcmp(name, "--backend") == 0) o->backend = v;
  else if (strcmp(name, "--load") == 0) o->load_dir = v;
  else if (strcmp(name, "--save") == 0) o->save_dir = v;
  else if (strcmp(name, "--perturb") == 0) o->perturb = v;
  else if (strcmp(name, "-o") == 0) o->output = v;
  else if (strcmp(name, "--reference") == 0) o->reference = v;
  else if (strcmp(name, "--config") == 0) {
    if (o->nconfigs == CLI_MAX_CONFIGS) return usage_error("too many --config options (at most %s)", "256");
    o->configs[o->nconfigs++] = v;
  } else if (strcmp(name, "--jobs") == 0) {
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < 1 || n > 64) return usage_error("--jobs needs a number from 1 to 64, got '%s'", v);
    o->jobs = (int)n;
  } else if (strcmp(name, "--seed") == 0) {
    char *end;
    errno = 0;
    unsigned long long n = strtoull(v, &end, 0);
    if (!*v || *end || errno || v[0] == '-') return usage_error("--seed needs a non-negative integer, got '%s'", v);
    o->seed = n;
  } else if (strcmp(name, "--timeout") == 0) {
    char *end;
    double t = strtod(v, &end);
    if (!*v || *end || !(t > 0) || t > 1e6)
      return usage_error("--timeout needs a number of seconds above 0, got '%s'", v);
    o->timeout = t;
  }
  return 0;
}

static void set_flag_option(cli_options *o, const char *name) {
  if (strcmp(name, "--verify") == 0) o->verify = 1;
  else if (strcmp(name, "--bench") == 0) o->bench = 1;
  else if (strcmp(name, "--json") == 0) o->json = 1;
  else if (strcmp(name, "--kernel-only") == 0) o->kernel_only = 1;
  else if (strcmp(name, "--explain") == 0) o->explain = 1;
  else if (strcmp(name, "--lowered") == 0) o->lowered = 1;
  else if (strcmp(name, "--list") == 0) o->list = 1;
}

/* -D NAME=VALUE (also -DNAME=VALUE): one binding. */
static int add_define(cli_options *o, const char *def) {
  const char *eq = strchr(def, '=');
  if (!eq || eq == def) return usage_error("-D needs NAME=VALUE, got '%s'", def);
  if (o->ndefines == CLI_MAX_DEFINES) return usage_error("too many -D options (at most %s)", "64");
  size_t n = (size_t)(eq - def);
  if (n >= sizeof o->define_names[0]) return usage_error("-D name too long: '%s'", def);
  memcpy(o->define_names[o->ndefines], def, n);
  o->define_names[o->ndefines][n] = 0;
  o->defines[o->ndefines].name = o->define_names[o->ndefines];
  o->defines[o->ndefines].value = eq + 1;
  o->ndefines++;
  return 0;
}

static int parse_options(int argc, char **argv, int first, cli_options *o) {
  memset(o, 0, sizeof *o);
  o->target = "auto";
  for (int i = first; i < argc; i++) {
    const char *a = argv[i];
    /* "--name=value": the option's name apart, its value inline */
    char name[64];
    const char *inline_value = NULL, *eq = strchr(a, '=');
    if (strncmp(a, "--", 2) == 0 && eq && (size_t)(eq - a) < sizeof name) {
      memcpy(name, a, (size_t)(eq - a));
      name[eq - a] = 0;
      inline_value = eq + 1;
      a = name;
    }
    int rc = 0;
    if (is_one_of(a, valued_options, sizeof valued_options / sizeof *valued_options)) {
      if (!inline_value && i + 1 >= argc) return usage_error("option '%s' needs a value", a);
      rc = set_valued_option(o, a, inline_value ? inline_value : argv[++i]);
    } else if (is_one_of(a, flag_options, sizeof flag_options / sizeof *flag_options)) {
      if (inline_value) return usage_error("option '%s' takes no value", a);
      set_flag_option(o, a);
    } else if (strncmp(a, "-D", 2) == 0) {
      if (!a[2] && i + 1 >= argc) return usage_error("option '%s' needs a value", a);
      rc = add_define(o, a[2] ? a + 2 : argv[++i]);
    } else if (a[0] == '-' && a[1]) {
      return usage_error("unknown option '%s'", argv[i]);
    } else if (!o->file) {
      o->file = a;
    } else {
      return usage_error("unexpected argument '%s'", a);
    }
    if (rc) return rc;
  }
  return 0;
}

void cli_compile_options(const cli_options *o, tilec_compile_options *co) {
  memset(co, 0, sizeof *co);
  co->kernel = o->kernel;
  co->defines = o->defines;
  co->num_defines = (size_t)o->ndefines;
  co->target = o->target;
  co->backend = o->backend;
}

static int cmd_ir(const cli_options *o) {
  tilec_error err = {0};
  tilec_context_options copts = {.flags = TILEC_CONTEXT_NO_DISK_CACHE};
  tilec_context *ctx = tilec_context_create(&copts, &err);
  if (!ctx) return cli_report(&err);
  int rc = 0;
  tilec_program *prog = tilec_program_from_file(ctx, o->file, &err);
  if (!prog) {
    rc = cli_report(&err);
  } else {
    if (o->list) {
      for (size_t i = 0; i < tilec_program_num_kernels(prog); i++) printf("%s\n", tilec_program_kernel_name(prog, i));
      tilec_program_destroy(prog);
      tilec_context_destroy(ctx);
      return 0;
    }
    tilec_compile_options co;
    cli_compile_options(o, &co);
    char *text = tilec_program_ir(prog, &co, o->lowered, &err);
    if (!text) rc = cli_report(&err);
    else fputs(text, stdout);
    tilec_free(text);
  }
  cli_print_warning(ctx);
  tilec_program_destroy(prog);
  tilec_context_destroy(ctx);
  return rc;
}

static int cmd_source(const cli_options *o) {
  tilec_error err = {0};
  tilec_context *ctx = tilec_context_create(NULL, &err);
  if (!ctx) return cli_report(&err);
  int rc = 0;
  tilec_program *prog = tilec_program_from_file(ctx, o->file, &err);
  if (!prog) {
    rc = cli_report(&err);
  } else {
    tilec_compile_options co;
    cli_compile_options(o, &co);
    int flags = (o->kernel_only ? TILEC_SOURCE_KERNEL_ONLY : 0) | (o->explain ? TILEC_SOURCE_EXPLAIN : 0);
    char *text = tilec_program_source(prog, &co, flags, &err); /* generation only: no compiler runs */
    if (!text) rc = cli_report(&err);
    else fputs(text, stdout);
    tilec_free(text);
  }
  cli_print_warning(ctx);
  tilec_program_destroy(prog);
  tilec_context_destroy(ctx);
  return rc;
}

void cli_print_warning(tilec_context *ctx) {
  char *w = tilec_context_take_warning(ctx);
  fflush(stdout);
  if (w && strstr(w, ": warning: ")) fputs(w, stderr); /* located in the kernel's source, rendered with its line */
  else if (w) fprintf(stderr, "tilec: warning: %s\n", w);
  tilec_free(w);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(usage_text, stderr);
    return CLI_EXIT_USAGE;
  }
  const char *cmd = argv[1];
  if (is_help_flag(cmd) || strcmp(cmd, "help") == 0) {
    const char *h = strcmp(cmd, "help") == 0 && argc > 2 ? help_of(argv[2]) : NULL;
    if (strcmp(cmd, "help") == 0 && argc > 2 && !h) return usage_error("no help for unknown command '%s'", argv[2]);
    fputs(h ? h : usage_text, stdout);
    return 0;
  }
  if (help_of(cmd)) /* `tilec CMD ... --help` prints CMD's help, whatever else is on the line */
    for (int i = 2; i < argc; i++)
      if (is_help_flag(argv[i])) {
        fputs(help_of(cmd), stdout);
        return 0;
      }
  if (strcmp(cmd, "--version") == 0) {
    printf("tilec %s\n", tilec_version());
    return 0;
  }
  if (strcmp(cmd, "backends") == 0) {
    const char *target = NULL;
    int json = 0;
    for (int i = 2; i < argc; i++) {
      if (strcmp(argv[i], "--json") == 0) json = 1;
      else if (strcmp(argv[i], "--target") == 0 && i + 1 < argc) target = argv[++i];
      else if (strncmp(argv[i], "--target=", 9) == 0) target = argv[i] + 9;
      else return usage_error("'backends' takes --json and --target T, got '%s'", argv[i]);
    }
    return cli_backends(target, json);
  }
  if (strcmp(cmd, "cache") == 0) return cli_cache(argc - 2, argv + 2);
  if (strcmp(cmd, "fuzz") == 0) return cli_fuzz(argc - 2, argv + 2);
  cli_options o;
  int is_ir = strcmp(cmd, "ir") == 0, is_run = strcmp(cmd, "run") == 0, is_source = strcmp(cmd, "source") == 0;
  int is_compile = strcmp(cmd, "compile") == 0, is_verify = strcmp(cmd, "verify") == 0, is_tune = strcmp(cmd, "tune") == 0;
  if (!is_ir && !is_run && !is_source && !is_compile && !is_verify && !is_tune) return usage_error("unknown command '%s'", cmd);
  int rc = parse_options(argc, argv, 2, &o);
  if (rc) return rc;
  if (!o.file) return usage_error("'%s' needs a FILE", cmd);
  if (o.list && !is_ir) return usage_error("--list is an option of 'tilec ir', not of '%s'", cmd);
  if ((o.nconfigs || o.jobs) && !is_tune) return usage_error("--config and --jobs are options of 'tilec tune', not of '%s'", cmd);
  if (o.timeout > 0 && !is_run && !is_verify && !is_tune)
    return usage_error("--timeout is an option of 'tilec run', 'verify' and 'tune', not of '%s'", cmd);
  if (is_tune) return cli_tune(&o);
  if (o.list) return cmd_ir(&o); /* names only: no @autotune configuration is evaluated */
  if ((rc = cli_apply_autotune(&o, 0)) != 0) return rc;
  if (is_ir) return cmd_ir(&o);
  if (is_source) return cmd_source(&o);
  if (is_verify) return cli_verify(&o);
  if (is_compile) {
    if (!o.output) return usage_error("'%s' needs -o OUT", cmd);
    return cli_compile(&o);
  }
  return cli_run(&o);
}
