/* eval_import.c: `from NAME import a, b` where NAME.py is a file beside the program (issue 10:
 * TileLang's examples share helpers between the files of one folder, e.g.
 * `from block_causal_attention import _check_dllm_block`).
 *
 * Python finds such a module on sys.path, whose first entry is the folder of the script it runs;
 * tilec looks in the folder of the program's file (its tc_source name) alone, and only for a
 * plain name that is not a module tilec models. The sibling is read, parsed and evaluated the
 * way the program's own module is: its top-level statements run lazily when one of its names is
 * first needed, in its own globals. A function it defines runs with those globals
 * (ev_module_enter / ev_module_leave), so a helper reaches the sibling's other names as it does
 * in Python. Its kernels are not the program's kernels. A sibling that does not parse, or lacks
 * an imported name, is a file:line:col error at the import.
 *
 * A folder NAME/ with an `__init__.py` beside the program is a sibling package
 * (`from quantize import _tir_packed_to_unsigned_convert`, dequantize_gemm's helpers): its
 * `__init__.py` is the module, and inside the package `from .sub import x` loads `sub.py` from
 * the package's folder the same way. Python allows a relative import only inside a package, so
 * the program's own module and a plain sibling file get an error for one. */
#include "front/eval_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_SIBLINGS = 16, MAX_SOURCE_BYTES = 16 << 20 };

typedef struct tc_modctx {
  const char *name; /* the import's module name (dotted inside a package); NULL for the program's own module */
  bool in_package;  /* a package's __init__.py or a module of it: relative imports resolve */
  const tc_source *src;
  const tc_ast *module;
  tc_env *globals;
  tc_pending *pending;
  int npending;
  const tc_ast **error_stmts;
  int nerror_stmts;
  struct tc_modctx *next;
} tc_modctx;

static void ctx_save(tc_ev *ev, tc_modctx *m) {
  m->src = ev->src;
  m->module = ev->module;
  m->globals = ev->globals;
  m->pending = ev->pending;
  m->npending = ev->npending;
  m->error_stmts = ev->error_stmts;
  m->nerror_stmts = ev->nerror_stmts;
}

static void ctx_load(tc_ev *ev, const tc_modctx *m) {
  ev->src = m->src;
  ev->module = m->module;
  ev->globals = m->globals;
  ev->pending = m->pending;
  ev->npending = m->npending;
  ev->error_stmts = m->error_stmts;
  ev->nerror_stmts = m->nerror_stmts;
}

/* The program's own module, as a context to come back to (made when the first sibling loads). */
static tc_modctx *main_ctx(tc_ev *ev) {
  for (tc_modctx *m = ev->modules; m; m = m->next)
    if (!m->name) return m;
  tc_modctx *m = EV_NEW(ev, tc_modctx);
  memset(m, 0, sizeof *m);
  ctx_save(ev, m);
  m->globals->mod = m;
  m->next = ev->modules;
  ev->modules = m;
  return m;
}

/* The module context ev is in now (the program's, or a sibling's while its code runs). */
static tc_modctx *current_ctx(tc_ev *ev) { return ev->globals->mod ? ev->globals->mod : main_ctx(ev); }

static bool is_plain_name(const char *s) {
  if (!*s || (*s >= '0' && *s <= '9')) return false;
  for (; *s; s++)
    if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9'))) return false;
  return true;
}

/* FILE (NAME.py or NAME/__init__.py) in the folder of the current module's file, read into the
 * IR arena (diagnostics of later stages point into it); NULL when there is no such regular file. */
static const tc_source *read_module_file(tc_ev *ev, const char *file, const char *module, tc_loc loc) {
  const char *from = ev->src ? ev->src->name : NULL;
  size_t n = from ? strlen(from) : 0;
  if (n < 4 || strcmp(from + n - 3, ".py") != 0) return NULL; /* a program given as a string */
  const char *slash = strrchr(from, '/');
  const char *path = slash ? tc_arena_printf(&ev->tmp, "%.*s/%s", (int)(slash - from), from, file)
                           : tc_arena_printf(&ev->tmp, "%s", file);
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return NULL;
  }
  if (st.st_size > MAX_SOURCE_BYTES) {
    fclose(f);
    ev_fail(ev, loc, "the module '%s' (%s) is larger than %d MiB", module, path, MAX_SOURCE_BYTES >> 20);
  }
  size_t len = (size_t)st.st_size;
  char *text = tc_arena_alloc(ev->ir, len + 1);
  size_t got = fread(text, 1, len, f);
  bool failed = ferror(f) != 0 || got != len;
  fclose(f);
  if (failed) ev_fail(ev, loc, "cannot read the module '%s' (%s)", module, path);
  text[len] = 0;
  if (memchr(text, 0, len)) ev_fail(ev, loc, "the module '%s' (%s) contains a null byte", module, path);
  tc_source *src = TC_NEW(ev->ir, tc_source);
  src->name = tc_arena_strdup(ev->ir, path);
  src->text = text;
  src->len = len;
  return src;
}

/* The module `module` names (dotted inside a package), whose file is base.py or, for a package,
 * base/__init__.py in the current module's folder; NULL when neither exists. */
static tc_modctx *load_sibling(tc_ev *ev, const char *module, const char *base, bool in_package, tc_loc loc) {
  int count = 0;
  for (tc_modctx *m = ev->modules; m; m = m->next) {
    if (m->name && strcmp(m->name, module) == 0) return m;
    count += m->name != NULL;
  }
  const tc_source *src = read_module_file(ev, tc_arena_printf(&ev->tmp, "%s.py", base), module, loc);
  if (!src) {
    src = read_module_file(ev, tc_arena_printf(&ev->tmp, "%s/__init__.py", base), module, loc);
    in_package = src != NULL;
  }
  if (!src) return NULL;
  if (count >= MAX_SIBLINGS) ev_fail(ev, loc, "more than %d sibling modules imported", MAX_SIBLINGS);
  tilec_error perr;
  memset(&perr, 0, sizeof perr);
  const tc_ast *ast = tc_read(&ev->tmp, src, &perr);
  if (!ast) ev_fail(ev, loc, "the module '%s' does not parse: %s:%d:%d: %s", module, src->name, perr.line, perr.col, perr.message);
  tc_modctx *back = current_ctx(ev);
  tc_modctx *m = EV_NEW(ev, tc_modctx);
  memset(m, 0, sizeof *m);
  m->name = tc_arena_strdup(&ev->tmp, module);
  m->in_package = in_package;
  ev->src = src;
  ev->module = ast;
  ev->globals = scope_new(ev, NULL, true);
  ev->globals->mod = m;
  ev->npending = 0;
  ev->nerror_stmts = 0;
  ev_scan_module(ev);
  ctx_save(ev, m);
  ctx_load(ev, back);
  m->next = ev->modules;
  ev->modules = m;
  return m;
}

bool ev_import_sibling(tc_ev *ev, const char *module, const tc_ast *s) {
  tc_modctx *m;
  if (module[0] == '.') {
    /* `from .sub import x`: sub.py in the folder of the package the current module belongs to */
    tc_modctx *here = current_ctx(ev);
    const char *sub = module + 1;
    if (!here->in_package)
      ev_fail(ev, s->loc, "attempted relative import '%s' outside a package (a relative import works only in a sibling package's modules)", module);
    if (!is_plain_name(sub))
      ev_fail(ev, s->loc, "unsupported: the relative import '%s' (tilec reads 'from .NAME import ...' within one package folder)", module);
    /* the package's name: the __init__ module's own name, or a submodule's name up to its last dot */
    const char *pkg = here->name;
    const char *dot = strrchr(pkg, '.');
    bool is_init = here->src && strlen(here->src->name) >= 12 &&
                   strcmp(here->src->name + strlen(here->src->name) - 12, "/__init__.py") == 0;
    const char *pkg_name = is_init || !dot ? pkg : tc_arena_strndup(&ev->tmp, pkg, (size_t)(dot - pkg));
    const char *full = tc_arena_printf(&ev->tmp, "%s.%s", pkg_name, sub);
    m = load_sibling(ev, full, sub, true, s->loc);
    if (!m) ev_fail(ev, s->loc, "no module named '%s' (looked for %s.py beside %s)", full, sub, here->src->name);
    module = full;
  } else {
    if (!is_plain_name(module)) return false;
    m = load_sibling(ev, module, module, false, s->loc);
    if (!m) return false;
  }
  for (int i = 0; i < s->list.n; i++) {
    const tc_ast *al = s->list.v[i];
    if (strcmp(al->str, "*") == 0) ev_unsupported(ev, al->loc, "'from ... import *' of a sibling module; import the names you use");
  }
  for (int i = 0; i < s->list.n; i++) {
    const tc_ast *al = s->list.v[i];
    tc_modctx *back = current_ctx(ev);
    tc_env *scope = ev->scope;
    ctx_load(ev, m);
    bool found;
    tc_val *v = ev_lookup_global(ev, al->str, al->loc, &found);
    ctx_load(ev, back);
    ev->scope = scope;
    if (!found || v->kind == TV_DEAD)
      ev_fail(ev, al->loc, "cannot import name '%s' from '%s' (%s)%s", al->str, module, m->src->name,
              found ? ": it is only defined by code that tilec does not run" : "");
    ev_bind_name(ev, al->str2 ? al->str2 : al->str, v, al->loc);
  }
  return true;
}

tc_modswitch ev_module_enter(tc_ev *ev, const tc_env *closure) {
  tc_modswitch sw = {NULL};
  if (!ev->modules) return sw; /* no sibling loaded: every function is the program's */
  const tc_env *root = closure;
  while (root && !root->is_module) root = root->parent;
  if (!root || root == ev->globals) return sw;
  tc_modctx *target = root->mod ? root->mod : main_ctx(ev);
  sw.saved = current_ctx(ev);
  ctx_load(ev, target);
  return sw;
}

void ev_module_leave(tc_ev *ev, tc_modswitch sw) {
  if (sw.saved) ctx_load(ev, sw.saved);
}
