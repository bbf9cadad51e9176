/* sim_device.c: the simulated Metal device behind the runtime's function table (sim.h, objc.h).
 *
 * Objects are one struct with a class tag and a reference count; classes and protocols are
 * static objects. Selectors are interned names (a SEL is a pointer to its name). Each msg_*
 * entry has exactly the signature of its objc_msgSend cast and dispatches on the selector; a
 * message an object does not answer is recorded as "UNRECOGNIZED" (on a Mac it would raise)
 * and answers nil/0. Command buffers run their commands in order at commit, on the calling
 * thread; waitUntilCompleted then has nothing to wait for. One mutex guards the record, the
 * configuration and the reference counts; dispatches run outside it. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "target/metal/emu.h"
#include "target/metal/objc.h"
#include "target/metal/sim.h"
#include "util/strbuf.h"

#define MAGIC 0x4d544c53u /* "MTLS" */
#define MAX_BIND 31
#define MAX_TG_MEM 32768
#define MAX_THREADS 1024

enum cls {
  C_CLASS, C_PROTOCOL, C_DEVICE, C_QUEUE, C_CB, C_CENC, C_BENC, C_BUFFER, C_LIBRARY, C_FUNCTION, C_PSO,
  C_OPTIONS, C_STRING, C_ERROR, C_PROCINFO, C_DATA
};
static const char *const k_cls_names[] = {"class", "protocol", "device", "queue", "commandBuffer",
                                          "computeEncoder", "blitEncoder", "buffer", "library", "function",
                                          "pipelineState", "compileOptions", "string", "error", "processInfo", "dispatchData"};

typedef struct sobj sobj;

typedef struct binding {
  sobj *buf;            /* retained; or NULL */
  size_t offset;
  unsigned char *bytes; /* setBytes copy; or NULL */
} binding;

typedef struct cmd {
  bool dispatch;
  /* dispatch */
  sobj *pso; /* retained */
  binding b[MAX_BIND];
  int nb;
  size_t tg_mem;
  uint32_t groups[3], threads[3];
  /* blit */
  sobj *src, *dst; /* retained */
  size_t src_off, dst_off, size;
} cmd;

struct sobj {
  uint32_t magic;
  int cls;
  int refs;
  int id;
  int makes;              /* a class object: the class it allocates */
  /* buffer */
  size_t length;
  tc_nsuint options;
  unsigned char *mem;
  /* library / options */
  tc_emu_library *lib;
  tc_nsuint lang;
  /* function / pso */
  sobj *ref; /* function: its library; pso: its function; error: its description; encoder: its cb */
  char *text; /* string; function name */
  /* command buffer */
  cmd *cmds;
  int ncmds, cap;
  int status;
  sobj *err;
  double t0, t1;
  bool encoding; /* an encoder is open on it */
  /* compute encoder state */
  sobj *pso;
  binding b[MAX_BIND];
  size_t tg_mem;
};

/* ---- global state ---- */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static tc_mtl_sim_config g_cfg;
static bool g_cfg_set;
static char g_cfg_error[256];
static tc_strbuf g_log;
static long g_live;
static int g_next_id;

static sobj k_classes[] = {
    {.magic = MAGIC, .cls = C_CLASS, .refs = 1, .makes = C_STRING, .text = "NSString"},
    {.magic = MAGIC, .cls = C_CLASS, .refs = 1, .makes = C_PROCINFO, .text = "NSProcessInfo"},
    {.magic = MAGIC, .cls = C_CLASS, .refs = 1, .makes = C_OPTIONS, .text = "MTLCompileOptions"},
};
static sobj k_protocols[] = {
    {.magic = MAGIC, .cls = C_PROTOCOL, .refs = 1, .makes = C_BUFFER, .text = "MTLBuffer"},
    {.magic = MAGIC, .cls = C_PROTOCOL, .refs = 1, .makes = C_DEVICE, .text = "MTLDevice"},
    {.magic = MAGIC, .cls = C_PROTOCOL, .refs = 1, .makes = C_QUEUE, .text = "MTLCommandQueue"},
};
static sobj g_procinfo = {.magic = MAGIC, .cls = C_PROCINFO, .refs = 1, .makes = 0, .text = "NSProcessInfo"};

void tc_mtl_sim_config_defaults(tc_mtl_sim_config *c) {
  *c = (tc_mtl_sim_config){15, 5, 0, 150000, true, 9, true, false, -1};
}

/* "15.5" or "15.5.1" -> parts; false when malformed. */
static bool parse_version(const char *s, long *maj, long *min, long *pat) {
  char *end;
  *maj = strtol(s, &end, 10);
  *min = *pat = 0;
  if (end == s || *maj <= 0) return false;
  if (*end == '.') {
    s = end + 1;
    *min = strtol(s, &end, 10);
    if (end == s || *min < 0) return false;
    if (*end == '.') {
      s = end + 1;
      *pat = strtol(s, &end, 10);
      if (end == s || *pat < 0) return false;
    }
  }
  return *end == 0;
}

static void config_from_env(tc_mtl_sim_config *c, char *why, size_t cap) {
  tc_mtl_sim_config_defaults(c);
  why[0] = 0;
  const char *v;
  long a, b, p;
  if ((v = getenv("TILEC_METAL_SIM_OS")) && *v) {
    if (parse_version(v, &a, &b, &p)) c->os_major = a, c->os_minor = b, c->os_patch = p;
    else snprintf(why, cap, "TILEC_METAL_SIM_OS='%s' is not a version such as 15.5", v);
  }
  if ((v = getenv("TILEC_METAL_SIM_SDK")) && *v) {
    if (parse_version(v, &a, &b, &p)) c->sdk_version = a * 10000 + b * 100 + p;
    else snprintf(why, cap, "TILEC_METAL_SIM_SDK='%s' is not a version such as 15.0", v);
  }
  if ((v = getenv("TILEC_METAL_SIM_FAMILIES")) && *v) {
    c->apple_family = 0;
    c->metal3 = c->metal4 = false;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
      int k;
      char extra;
      if (strcmp(w, "metal3") == 0) c->metal3 = true;
      else if (strcmp(w, "metal4") == 0) c->metal4 = true;
      else if (sscanf(w, "apple%d%c", &k, &extra) == 1 && k > 0 && k < 100) c->apple_family = k > c->apple_family ? k : c->apple_family;
      else snprintf(why, cap, "TILEC_METAL_SIM_FAMILIES: unknown family '%s' (appleN, metal3, metal4)", w);
    }
  }
  if ((v = getenv("TILEC_METAL_SIM_FAULT")) && *v && strcmp(v, "off") != 0) {
    char *end;
    long n = strtol(v, &end, 10);
    if (end == v || *end || n < 0 || n > 1000000) snprintf(why, cap, "TILEC_METAL_SIM_FAULT='%s' is not a count of dispatches or 'off'", v);
    else c->fault_after = (int)n;
  }
  if ((v = getenv("TILEC_METAL_SIM_DEVICE")) && strcmp(v, "0") == 0) c->device = false;
}

/* Under g_mu. */
static void ensure_config(void) {
  if (g_cfg_set) return;
  config_from_env(&g_cfg, g_cfg_error, sizeof g_cfg_error);
  g_cfg_set = true;
}

void tc_mtl_sim_configure(const tc_mtl_sim_config *c) {
  pthread_mutex_lock(&g_mu);
  g_cfg = *c;
  g_cfg_set = true;
  g_cfg_error[0] = 0;
  tc_sb_free(&g_log);
  pthread_mutex_unlock(&g_mu);
}

void tc_mtl_sim_reset(void) {
  pthread_mutex_lock(&g_mu);
  g_cfg_set = false;
  ensure_config();
  tc_sb_free(&g_log);
  pthread_mutex_unlock(&g_mu);
}

bool tc_mtl_sim_config_error(char *why, size_t cap) {
  pthread_mutex_lock(&g_mu);
  ensure_config();
  bool bad = g_cfg_error[0] != 0;
  if (bad && why && cap) snprintf(why, cap, "%s", g_cfg_error);
  pthread_mutex_unlock(&g_mu);
  return bad;
}

static tc_mtl_sim_config config(void) {
  pthread_mutex_lock(&g_mu);
  ensure_config();
  tc_mtl_sim_config c = g_cfg;
  pthread_mutex_unlock(&g_mu);
  return c;
}

static void record(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void record(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  pthread_mutex_lock(&g_mu);
  if (g_log.len < (64u << 20)) { /* a runaway loop must not eat the memory */
    tc_sb_vprintf(&g_log, fmt, ap);
    tc_sb_putc(&g_log, '\n');
  }
  pthread_mutex_unlock(&g_mu);
  va_end(ap);
}

char *tc_mtl_sim_calls(void) {
  pthread_mutex_lock(&g_mu);
  char *s = strdup(tc_sb_cstr(&g_log));
  pthread_mutex_unlock(&g_mu);
  return s;
}

void tc_mtl_sim_clear_calls(void) {
  pthread_mutex_lock(&g_mu);
  tc_sb_free(&g_log);
  pthread_mutex_unlock(&g_mu);
}

long tc_mtl_sim_live_objects(void) {
  pthread_mutex_lock(&g_mu);
  long n = g_live;
  pthread_mutex_unlock(&g_mu);
  return n;
}

/* ---- objects ---- */

static sobj *obj(tc_id p) {
  sobj *o = p;
  return o && o->magic == MAGIC ? o : NULL;
}

static sobj *make(int cls) {
  sobj *o = calloc(1, sizeof *o);
  if (!o) return NULL;
  o->magic = MAGIC;
  o->cls = cls;
  o->refs = 1;
  pthread_mutex_lock(&g_mu);
  o->id = ++g_next_id;
  g_live++;
  pthread_mutex_unlock(&g_mu);
  return o;
}

static bool is_static(const sobj *o) { return o->cls == C_CLASS || o->cls == C_PROTOCOL || o == &g_procinfo; }

static tc_id sim_retain(tc_id p) {
  sobj *o = obj(p);
  if (!o || is_static(o)) return p;
  pthread_mutex_lock(&g_mu);
  o->refs++;
  pthread_mutex_unlock(&g_mu);
  return p;
}

static void drop_binding(binding *b);
static void sim_release(tc_id p);

static void destroy(sobj *o) {
  switch (o->cls) {
  case C_BUFFER:
  case C_DATA: free(o->mem); break;
  case C_LIBRARY: tc_emu_library_free(o->lib); break;
  case C_CB:
    for (int i = 0; i < o->ncmds; i++) {
      cmd *c = &o->cmds[i];
      if (c->pso) sim_release(c->pso);
      for (int j = 0; j < c->nb; j++) drop_binding(&c->b[j]);
      if (c->src) sim_release(c->src);
      if (c->dst) sim_release(c->dst);
    }
    free(o->cmds);
    if (o->err) sim_release(o->err);
    break;
  case C_CENC:
    if (o->pso) sim_release(o->pso);
    for (int j = 0; j < MAX_BIND; j++) drop_binding(&o->b[j]);
    break;
  default: break;
  }
  if (o->ref) sim_release(o->ref);
  free(o->text);
  o->magic = 0;
  free(o);
}

static void sim_release(tc_id p) {
  sobj *o = obj(p);
  if (!o || is_static(o)) return;
  pthread_mutex_lock(&g_mu);
  bool last = --o->refs == 0;
  if (last) g_live--;
  pthread_mutex_unlock(&g_mu);
  if (last) destroy(o);
}

static void drop_binding(binding *b) {
  if (b->buf) sim_release(b->buf);
  free(b->bytes);
  *b = (binding){0};
}

/* ---- autorelease pools: a per-thread stack of objects ---- */

static _Thread_local sobj **t_pool;
static _Thread_local size_t t_pool_n, t_pool_cap;
static _Thread_local int t_pool_depth;

static void *sim_pool_push(void) {
  t_pool_depth++;
  return (void *)(uintptr_t)(t_pool_n + 1); /* never NULL */
}

static void sim_pool_pop(void *mark) {
  size_t m = (size_t)(uintptr_t)mark - 1;
  while (t_pool_n > m) sim_release(t_pool[--t_pool_n]);
  if (t_pool_depth > 0) t_pool_depth--;
  if (!t_pool_n) {
    free(t_pool);
    t_pool = NULL;
    t_pool_cap = 0;
  }
}

static tc_id autorelease(sobj *o) {
  if (!o) return NULL;
  if (!t_pool_depth) {
    record("LEAK autoreleased %s#%d with no pool in place", k_cls_names[o->cls], o->id);
    return o;
  }
  if (t_pool_n == t_pool_cap) {
    size_t cap = t_pool_cap ? 2 * t_pool_cap : 64;
    sobj **p = realloc(t_pool, cap * sizeof *p);
    if (!p) return o; /* leaks rather than crash */
    t_pool = p;
    t_pool_cap = cap;
  }
  t_pool[t_pool_n++] = o;
  return o;
}

static sobj *new_string(const char *s) {
  sobj *o = make(C_STRING);
  if (o && !(o->text = strdup(s ? s : ""))) {
    sim_release(o);
    o = NULL;
  }
  return o;
}

/* An autoreleased NSError whose localizedDescription is `text`. */
static sobj *new_error(const char *text) {
  sobj *e = make(C_ERROR);
  if (e && !(e->ref = new_string(text))) {
    sim_release(e);
    e = NULL;
  }
  return e;
}

/* ---- the C entry points ---- */

static tc_id sim_get_class(const char *name) {
  for (size_t i = 0; i < sizeof k_classes / sizeof *k_classes; i++)
    if (strcmp(k_classes[i].text, name) == 0) return &k_classes[i];
  record("objc_getClass %s -> nil", name);
  return NULL;
}

static tc_id sim_get_protocol(const char *name) {
  for (size_t i = 0; i < sizeof k_protocols / sizeof *k_protocols; i++)
    if (strcmp(k_protocols[i].text, name) == 0) return &k_protocols[i];
  return NULL;
}

/* Interned selector names: a SEL is the address of its entry. */
static char g_sels[160][96];
static int g_nsels;

static tc_sel sim_register_name(const char *name) {
  pthread_mutex_lock(&g_mu);
  tc_sel s = NULL;
  for (int i = 0; i < g_nsels && !s; i++)
    if (strcmp(g_sels[i], name) == 0) s = g_sels[i];
  if (!s && g_nsels < (int)(sizeof g_sels / sizeof *g_sels) && strlen(name) < sizeof g_sels[0]) {
    snprintf(g_sels[g_nsels], sizeof g_sels[0], "%s", name);
    s = g_sels[g_nsels++];
  }
  pthread_mutex_unlock(&g_mu);
  return s;
}

static const char *sel_name(tc_sel s) { return s ? (const char *)s : "(null)"; }
static bool is(tc_sel s, const char *name) { return s && strcmp((const char *)s, name) == 0; }

static tc_id sim_data_create(const void *bytes, size_t n, void *queue, void *destructor) {
  (void)queue;
  (void)destructor; /* the default destructor: the bytes are copied */
  sobj *d = make(C_DATA);
  if (!d) return NULL;
  d->length = n;
  if (!(d->mem = malloc(n ? n : 1))) {
    sim_release(d);
    return NULL;
  }
  memcpy(d->mem, bytes, n);
  return d;
}

static tc_id sim_create_device(void) {
  tc_mtl_sim_config c = config();
  if (!c.device) {
    record("MTLCreateSystemDefaultDevice -> nil");
    return NULL;
  }
  sobj *d = make(C_DEVICE);
  record("MTLCreateSystemDefaultDevice -> device#%d", d ? d->id : 0);
  return d;
}

static void unrecognized(tc_id self, tc_sel op) {
  sobj *o = obj(self);
  record("UNRECOGNIZED %s sent to %s", sel_name(op), o ? k_cls_names[o->cls] : "a non-object");
}

/* ---- compile ---- */

static tc_nsuint max_language(const tc_mtl_sim_config *c) {
  /* What the OS and the SDK's compiler both know: Metal 3.0 macOS 13, 3.1 14, 3.2 15, 4.0 26. */
  long os = c->os_major, sdk = c->sdk_version / 10000, v = os < sdk ? os : sdk;
  if (v >= 26) return TC_MTL_LANGUAGE(4, 0);
  if (v >= 15) return TC_MTL_LANGUAGE(3, 2);
  if (v >= 14) return TC_MTL_LANGUAGE(3, 1);
  if (v >= 13) return TC_MTL_LANGUAGE(3, 0);
  return TC_MTL_LANGUAGE(2, 4);
}

static bool ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* Whether `word` occurs in `text` as a whole identifier (so "bfloat" is not found in "tcg_bfloat16"). */
static bool has_word(const char *text, const char *word) {
  size_t n = strlen(word);
  for (const char *p = strstr(text, word); p; p = strstr(p + 1, word))
    if ((p == text || !ident_char(p[-1])) && !ident_char(p[n])) return true;
  return false;
}

static tc_id new_library(sobj *dev, tc_id srcp, tc_id optp, tc_id *errp) {
  sobj *src = obj(srcp), *opt = obj(optp);
  tc_nsuint lang = opt ? opt->lang : 0;
  record("newLibraryWithSource:options:error: %zu-bytes languageVersion=%lu.%lu", src && src->text ? strlen(src->text) : 0,
         lang >> 16, lang & 0xffff);
  (void)dev;
  if (errp) *errp = NULL;
  char msg[512] = "";
  tc_mtl_sim_config c = config();
  if (!src || src->cls != C_STRING) snprintf(msg, sizeof msg, "no source string");
  else if (lang && lang > max_language(&c))
    snprintf(msg, sizeof msg, "error: language version %lu.%lu is not supported on this OS/SDK (macOS %ld.%ld, SDK %ld)",
             lang >> 16, lang & 0xffff, c.os_major, c.os_minor, c.sdk_version);
  else if (lang && lang < TC_MTL_LANGUAGE(4, 0) && strstr(src->text, "MetalPerformancePrimitives"))
    snprintf(msg, sizeof msg, "program_source: error: MetalPerformancePrimitives requires Metal 4.0 (-std=metal4.0)");
  else if (lang && lang < TC_MTL_LANGUAGE(3, 1) && has_word(src->text, "bfloat"))
    snprintf(msg, sizeof msg, "program_source: error: unknown type name 'bfloat' (bfloat needs Metal 3.1)");
  if (msg[0]) {
    if (errp) *errp = autorelease(new_error(msg));
    return NULL;
  }
  tc_emu_library *lib = NULL;
  char *log = NULL;
  tilec_error e = {0};
  if (tc_emu_library_build(src->text, NULL, &lib, &log, &e) != TILEC_OK) {
    tc_strbuf sb;
    tc_sb_init(&sb);
    tc_sb_printf(&sb, "Compilation failed: %s", e.message);
    if (log && *log) tc_sb_printf(&sb, "\n%s", log);
    free(log);
    if (errp) *errp = autorelease(new_error(tc_sb_cstr(&sb)));
    tc_sb_free(&sb);
    return NULL;
  }
  free(log);
  sobj *l = make(C_LIBRARY);
  if (!l) {
    tc_emu_library_free(lib);
    return NULL;
  }
  l->lib = lib;
  l->lang = lang;
  return l;
}

/* ---- command buffers ---- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static cmd *add_cmd(sobj *cb) {
  if (cb->ncmds == cb->cap) {
    int cap = cb->cap ? 2 * cb->cap : 8;
    cmd *p = realloc(cb->cmds, (size_t)cap * sizeof *p);
    if (!p) return NULL;
    cb->cmds = p;
    cb->cap = cap;
  }
  cmd *c = &cb->cmds[cb->ncmds++];
  memset(c, 0, sizeof *c);
  return c;
}

static bool is_private(const sobj *b) { return (b->options & TC_MTL_RESOURCE_STORAGE_MASK) == TC_MTL_RESOURCE_STORAGE_PRIVATE; }

/* The stale view of a private buffer: its bytes when the command buffer began. */
typedef struct snapshot {
  sobj *buf;
  unsigned char *mem;
} snapshot;

static const unsigned char *stale_of(snapshot *s, int n, const sobj *b) {
  for (int i = 0; i < n; i++)
    if (s[i].buf == b) return s[i].mem;
  return NULL;
}

static void fail_cb(sobj *cb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail_cb(sobj *cb, const char *fmt, ...) {
  if (cb->status == TC_MTL_CB_ERROR) return;
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cb->status = TC_MTL_CB_ERROR;
  cb->err = new_error(msg); /* owned by the command buffer */
}

static void run_cb(sobj *cb) {
  tc_mtl_sim_config c = config();
  cb->status = TC_MTL_CB_COMMITTED;
  /* Fault mode: keep the private buffers' starting bytes. */
  snapshot *snap = NULL;
  int nsnap = 0;
  if (c.fault_after >= 0) {
    snap = calloc((size_t)cb->ncmds * (MAX_BIND + 2) + 1, sizeof *snap);
    for (int i = 0; snap && i < cb->ncmds; i++) {
      cmd *k = &cb->cmds[i];
      sobj *bs[MAX_BIND + 2];
      int nbs = 0;
      for (int j = 0; j < k->nb; j++)
        if (k->b[j].buf) bs[nbs++] = k->b[j].buf;
      if (k->src) bs[nbs++] = k->src;
      if (k->dst) bs[nbs++] = k->dst;
      for (int j = 0; j < nbs; j++) {
        if (!is_private(bs[j]) || stale_of(snap, nsnap, bs[j])) continue;
        unsigned char *m = malloc(bs[j]->length ? bs[j]->length : 1);
        if (!m) continue;
        memcpy(m, bs[j]->mem, bs[j]->length);
        snap[nsnap++] = (snapshot){bs[j], m};
      }
    }
  }
  cb->t0 = now_s();
  int ndispatched = 0;
  for (int i = 0; i < cb->ncmds && cb->status != TC_MTL_CB_ERROR; i++) {
    cmd *k = &cb->cmds[i];
    bool stale = c.fault_after >= 0 && ndispatched >= c.fault_after;
    if (!k->dispatch) {
      const unsigned char *from = k->src->mem + k->src_off;
      const unsigned char *old = stale && is_private(k->src) ? stale_of(snap, nsnap, k->src) : NULL;
      if (old) from = old + k->src_off;
      memmove(k->dst->mem + k->dst_off, from, k->size);
      continue;
    }
    void *bind[MAX_BIND] = {0};
    unsigned char *tmp[MAX_BIND] = {0};
    for (int j = 0; j < k->nb; j++) {
      const binding *b = &k->b[j];
      if (b->bytes) bind[j] = b->bytes;
      else if (b->buf) {
        const unsigned char *old = stale && is_private(b->buf) ? stale_of(snap, nsnap, b->buf) : NULL;
        if (old && (tmp[j] = malloc(b->buf->length ? b->buf->length : 1))) {
          memcpy(tmp[j], old, b->buf->length);
          bind[j] = tmp[j] + b->offset;
        } else {
          bind[j] = b->buf->mem + b->offset;
        }
      }
    }
    sobj *fn = k->pso->ref, *lib = fn->ref;
    tilec_error e = {0};
    if (tc_emu_dispatch(lib->lib, fn->text, bind, k->nb, k->groups, k->threads, k->tg_mem, &e) != TILEC_OK)
      fail_cb(cb, "dispatch of '%s' failed: %s", fn->text, e.message);
    for (int j = 0; j < k->nb; j++) {
      if (!tmp[j]) continue;
      /* what the stale run wrote lands in the buffer */
      memcpy(k->b[j].buf->mem, tmp[j], k->b[j].buf->length);
      free(tmp[j]);
    }
    ndispatched++;
  }
  cb->t1 = now_s();
  for (int i = 0; i < nsnap; i++) free(snap[i].mem);
  free(snap);
  if (cb->status != TC_MTL_CB_ERROR) cb->status = TC_MTL_CB_COMPLETED;
}

/* ---- encoders ---- */

static sobj *new_encoder(sobj *cb, int cls) {
  if (cb->encoding) {
    record("ERROR %s while an encoder is open on commandBuffer#%d", cls == C_CENC ? "computeCommandEncoder" : "blitCommandEncoder", cb->id);
    return NULL;
  }
  if (cb->status != TC_MTL_CB_NOT_ENQUEUED) {
    record("ERROR encoder on committed commandBuffer#%d", cb->id);
    return NULL;
  }
  sobj *e = make(cls);
  if (!e) return NULL;
  e->ref = sim_retain(cb);
  cb->encoding = true;
  return autorelease(e);
}

static void dispatch(sobj *enc, tc_mtl_size g, tc_mtl_size t) {
  sobj *cb = enc->ref;
  record("dispatchThreadgroups:threadsPerThreadgroup: %lu,%lu,%lu %lu,%lu,%lu tg_mem=%zu", g.width, g.height, g.depth,
         t.width, t.height, t.depth, enc->tg_mem);
  if (!enc->pso) {
    fail_cb(cb, "dispatch without a compute pipeline state");
    return;
  }
  if (t.width * t.height * t.depth > MAX_THREADS || !t.width || !t.height || !t.depth) {
    fail_cb(cb, "threadsPerThreadgroup %lu x %lu x %lu exceeds the pipeline's limit of %d", t.width, t.height, t.depth, MAX_THREADS);
    return;
  }
  if (enc->tg_mem > MAX_TG_MEM) {
    fail_cb(cb, "threadgroup memory of %zu bytes exceeds the device's %d", enc->tg_mem, MAX_TG_MEM);
    return;
  }
  cmd *c = add_cmd(cb);
  if (!c) {
    fail_cb(cb, "out of memory");
    return;
  }
  c->dispatch = true;
  c->pso = sim_retain(enc->pso);
  c->tg_mem = enc->tg_mem;
  c->groups[0] = (uint32_t)g.width, c->groups[1] = (uint32_t)g.height, c->groups[2] = (uint32_t)g.depth;
  c->threads[0] = (uint32_t)t.width, c->threads[1] = (uint32_t)t.height, c->threads[2] = (uint32_t)t.depth;
  for (int j = 0; j < MAX_BIND; j++) {
    const binding *b = &enc->b[j];
    if (!b->buf && !b->bytes) continue;
    c->nb = j + 1;
    if (b->buf) c->b[j].buf = sim_retain(b->buf), c->b[j].offset = b->offset;
    else {
      /* setBytes content is captured per dispatch; the length rides in front */
      size_t n;
      memcpy(&n, b->bytes, sizeof n);
      c->b[j].bytes = malloc(n + sizeof n);
      if (c->b[j].bytes) memcpy(c->b[j].bytes, b->bytes + sizeof n, n);
    }
  }
}

/* ---- messages, one function per signature ---- */

static tc_id sim_msg_o(tc_id self, tc_sel op) {
  sobj *o = obj(self);
  if (!o) {
    unrecognized(self, op);
    return NULL;
  }
  if (o->cls == C_CLASS && is(op, "processInfo") && o->makes == C_PROCINFO) return &g_procinfo;
  if (o->cls == C_CLASS && (is(op, "new") || is(op, "alloc")) && o->makes == C_OPTIONS) {
    sobj *opt = make(C_OPTIONS);
    return opt;
  }
  if (o->cls == C_OPTIONS && is(op, "init")) return o;
  if (o->cls == C_DEVICE && is(op, "newCommandQueue")) {
    record("newCommandQueue");
    return make(C_QUEUE);
  }
  if (o->cls == C_DEVICE && is(op, "name")) return autorelease(new_string("tilec simulated Metal device"));
  if (o->cls == C_QUEUE && is(op, "commandBuffer")) {
    sobj *cb = make(C_CB);
    if (cb) cb->ref = sim_retain(o);
    record("commandBuffer -> commandBuffer#%d", cb ? cb->id : 0);
    return autorelease(cb);
  }
  if (o->cls == C_CB && is(op, "computeCommandEncoder")) {
    record("computeCommandEncoder");
    return new_encoder(o, C_CENC);
  }
  if (o->cls == C_CB && is(op, "blitCommandEncoder")) {
    record("blitCommandEncoder");
    return new_encoder(o, C_BENC);
  }
  if (o->cls == C_CB && is(op, "error")) return o->err;
  if (o->cls == C_ERROR && is(op, "localizedDescription")) return o->ref;
  unrecognized(self, op);
  return NULL;
}

static tc_id sim_msg_o_p(tc_id self, tc_sel op, const void *a) {
  sobj *o = obj(self);
  if (o && o->cls == C_CLASS && o->makes == C_STRING && is(op, "stringWithUTF8String:"))
    return autorelease(new_string(a));
  if (o && o->cls == C_LIBRARY && is(op, "newFunctionWithName:")) {
    sobj *name = obj((tc_id)a);
    record("newFunctionWithName: %s", name && name->text ? name->text : "(not a string)");
    if (!name || name->cls != C_STRING) return NULL;
    sobj *f = make(C_FUNCTION);
    if (f && !(f->text = strdup(name->text))) {
      sim_release(f);
      return NULL;
    }
    if (f) f->ref = sim_retain(o);
    return f;
  }
  unrecognized(self, op);
  return NULL;
}

static tc_id sim_msg_o_uu(tc_id self, tc_sel op, tc_nsuint len, tc_nsuint options) {
  sobj *o = obj(self);
  if (o && o->cls == C_DEVICE && is(op, "newBufferWithLength:options:")) {
    tc_nsuint mode = options & TC_MTL_RESOURCE_STORAGE_MASK;
    record("newBufferWithLength:options: %lu 0x%lx (%s)", len, options,
           mode == TC_MTL_RESOURCE_STORAGE_PRIVATE ? "private" : mode == TC_MTL_RESOURCE_STORAGE_SHARED ? "shared" : "managed");
    if (!len || len > ((tc_nsuint)1 << 36)) return NULL;
    sobj *b = make(C_BUFFER);
    if (!b) return NULL;
    b->length = len;
    b->options = options;
    /* fresh memory is not zero on a GPU either: a pattern (finite in every float type: 0.747f,
     * 1.81 as half), so reads of unwritten or stale data give wrong numbers, not NaNs */
    if (!(b->mem = malloc(len))) {
      sim_release(b);
      return NULL;
    }
    memset(b->mem, 0x3f, len);
    return b;
  }
  unrecognized(self, op);
  return NULL;
}

static tc_id sim_msg_o_ooe(tc_id self, tc_sel op, tc_id a, tc_id b, tc_id *e) {
  sobj *o = obj(self);
  if (o && o->cls == C_DEVICE && is(op, "newLibraryWithSource:options:error:")) return new_library(o, a, b, e);
  unrecognized(self, op);
  return NULL;
}

static tc_id sim_msg_o_oe(tc_id self, tc_sel op, tc_id a, tc_id *e) {
  sobj *o = obj(self), *f = obj(a);
  if (o && o->cls == C_DEVICE && is(op, "newLibraryWithData:error:")) {
    /* A metallib is AIR bytecode for Apple GPUs: nothing here can run it. */
    record("newLibraryWithData:error: %zu-bytes", f && f->cls == C_DATA ? f->length : 0);
    if (e) *e = autorelease(new_error("the simulated Metal device cannot load metallib bytecode (only MSL source)"));
    return NULL;
  }
  if (o && o->cls == C_DEVICE && is(op, "newComputePipelineStateWithFunction:error:")) {
    record("newComputePipelineStateWithFunction:error: %s", f && f->text ? f->text : "(nil)");
    if (e) *e = NULL;
    if (!f || f->cls != C_FUNCTION) {
      if (e) *e = autorelease(new_error("function is nil"));
      return NULL;
    }
    sobj *p = make(C_PSO);
    if (p) p->ref = sim_retain(f);
    return p;
  }
  unrecognized(self, op);
  return NULL;
}

static void sim_msg_v(tc_id self, tc_sel op) {
  sobj *o = obj(self);
  if (o && (o->cls == C_CENC || o->cls == C_BENC) && is(op, "endEncoding")) {
    record("endEncoding");
    ((sobj *)o->ref)->encoding = false;
    return;
  }
  if (o && o->cls == C_CB && is(op, "commit")) {
    record("commit commandBuffer#%d (%d commands)", o->id, o->ncmds);
    if (o->encoding) fail_cb(o, "commit with an encoder still open");
    else if (o->status != TC_MTL_CB_NOT_ENQUEUED) record("ERROR commit of commandBuffer#%d twice", o->id);
    else run_cb(o);
    return;
  }
  if (o && o->cls == C_CB && is(op, "waitUntilCompleted")) {
    record("waitUntilCompleted");
    if (o->status < TC_MTL_CB_COMMITTED) record("ERROR waitUntilCompleted on uncommitted commandBuffer#%d", o->id);
    return;
  }
  if (o && is(op, "release")) {
    sim_release(o);
    return;
  }
  unrecognized(self, op);
}

static void sim_msg_v_u(tc_id self, tc_sel op, tc_nsuint a) {
  sobj *o = obj(self);
  if (o && o->cls == C_OPTIONS && is(op, "setLanguageVersion:")) {
    record("setLanguageVersion: %lu.%lu", a >> 16, a & 0xffff);
    o->lang = a;
    return;
  }
  if (o && o->cls == C_OPTIONS && is(op, "setFastMathEnabled:")) {
    record("setFastMathEnabled: %lu", a);
    return;
  }
  unrecognized(self, op);
}

static void sim_msg_v_o(tc_id self, tc_sel op, tc_id a) {
  sobj *o = obj(self), *p = obj(a);
  if (o && o->cls == C_CENC && is(op, "setComputePipelineState:") && p && p->cls == C_PSO) {
    record("setComputePipelineState: %s", ((sobj *)p->ref)->text);
    sim_retain(p);
    if (o->pso) sim_release(o->pso);
    o->pso = p;
    return;
  }
  unrecognized(self, op);
}

static void sim_msg_v_ouu(tc_id self, tc_sel op, tc_id a, tc_nsuint off, tc_nsuint idx) {
  sobj *o = obj(self), *b = obj(a);
  if (o && o->cls == C_CENC && is(op, "setBuffer:offset:atIndex:")) {
    record("setBuffer:offset:atIndex: buffer#%d %lu %lu", b ? b->id : 0, off, idx);
    if (idx >= MAX_BIND || (b && (b->cls != C_BUFFER || off > b->length))) {
      fail_cb(o->ref, "setBuffer:offset:atIndex: bad buffer, offset %lu or index %lu", off, idx);
      return;
    }
    drop_binding(&o->b[idx]);
    if (b) o->b[idx] = (binding){sim_retain(b), off, NULL};
    return;
  }
  unrecognized(self, op);
}

static void sim_msg_v_puu(tc_id self, tc_sel op, const void *p, tc_nsuint len, tc_nsuint idx) {
  sobj *o = obj(self);
  if (o && o->cls == C_CENC && is(op, "setBytes:length:atIndex:")) {
    record("setBytes:length:atIndex: %lu %lu", len, idx);
    if (idx >= MAX_BIND || len > 4096 || !p) {
      fail_cb(o->ref, "setBytes:length:atIndex: bad length %lu or index %lu", len, idx);
      return;
    }
    drop_binding(&o->b[idx]);
    size_t n = len;
    unsigned char *copy = malloc(sizeof n + (n ? n : 1));
    if (!copy) return;
    memcpy(copy, &n, sizeof n);
    memcpy(copy + sizeof n, p, n);
    o->b[idx] = (binding){NULL, 0, copy};
    return;
  }
  unrecognized(self, op);
}

static void sim_msg_v_uu(tc_id self, tc_sel op, tc_nsuint len, tc_nsuint idx) {
  sobj *o = obj(self);
  if (o && o->cls == C_CENC && is(op, "setThreadgroupMemoryLength:atIndex:")) {
    record("setThreadgroupMemoryLength:atIndex: %lu %lu", len, idx);
    if (idx != 0) fail_cb(o->ref, "the emulator has one threadgroup memory argument, [[threadgroup(0)]]");
    else o->tg_mem = len;
    return;
  }
  unrecognized(self, op);
}

static void sim_msg_v_ss(tc_id self, tc_sel op, tc_mtl_size g, tc_mtl_size t) {
  sobj *o = obj(self);
  if (o && o->cls == C_CENC && is(op, "dispatchThreadgroups:threadsPerThreadgroup:")) {
    dispatch(o, g, t);
    return;
  }
  unrecognized(self, op);
}

static void sim_msg_v_ououu(tc_id self, tc_sel op, tc_id a, tc_nsuint ao, tc_id b, tc_nsuint bo, tc_nsuint n) {
  sobj *o = obj(self), *src = obj(a), *dst = obj(b);
  if (o && o->cls == C_BENC && is(op, "copyFromBuffer:sourceOffset:toBuffer:destinationOffset:size:")) {
    record("copyFromBuffer:sourceOffset:toBuffer:destinationOffset:size: buffer#%d %lu buffer#%d %lu %lu", src ? src->id : 0,
           ao, dst ? dst->id : 0, bo, n);
    sobj *cb = o->ref;
    if (!src || !dst || src->cls != C_BUFFER || dst->cls != C_BUFFER || ao > src->length || n > src->length - ao ||
        bo > dst->length || n > dst->length - bo) {
      fail_cb(cb, "copyFromBuffer: out of range");
      return;
    }
    cmd *c = add_cmd(cb);
    if (!c) {
      fail_cb(cb, "out of memory");
      return;
    }
    c->src = sim_retain(src);
    c->dst = sim_retain(dst);
    c->src_off = ao, c->dst_off = bo, c->size = n;
    return;
  }
  unrecognized(self, op);
}

static tc_nsuint sim_msg_u(tc_id self, tc_sel op) {
  sobj *o = obj(self);
  if (o && o->cls == C_BUFFER && is(op, "length")) return o->length;
  if (o && o->cls == C_BUFFER && is(op, "storageMode")) return (o->options & TC_MTL_RESOURCE_STORAGE_MASK) >> 4;
  if (o && o->cls == C_CB && is(op, "status")) return (tc_nsuint)o->status;
  if (o && o->cls == C_PSO && is(op, "maxTotalThreadsPerThreadgroup")) return MAX_THREADS;
  if (o && o->cls == C_DEVICE && is(op, "maxThreadgroupMemoryLength")) return MAX_TG_MEM;
  unrecognized(self, op);
  return 0;
}

static tc_bool sim_msg_b_l(tc_id self, tc_sel op, tc_nsint fam) {
  sobj *o = obj(self);
  if (o && o->cls == C_DEVICE && is(op, "supportsFamily:")) {
    tc_mtl_sim_config c = config();
    bool yes = (fam >= 1001 && fam <= 1099 && fam - 1000 <= c.apple_family) || (fam == TC_MTL_FAMILY_METAL3 && c.metal3) ||
               (fam == TC_MTL_FAMILY_METAL4 && c.metal4);
    record("supportsFamily: %ld -> %s", fam, yes ? "YES" : "NO");
    return yes;
  }
  unrecognized(self, op);
  return 0;
}

static tc_bool sim_msg_b_o(tc_id self, tc_sel op, tc_id a) {
  sobj *o = obj(self), *p = obj(a);
  if (is(op, "conformsToProtocol:")) return o && p && p->cls == C_PROTOCOL && o->cls == p->makes;
  unrecognized(self, op);
  return 0;
}

static void *sim_msg_p(tc_id self, tc_sel op) {
  sobj *o = obj(self);
  if (o && o->cls == C_BUFFER && is(op, "contents")) {
    record("contents buffer#%d%s", o->id, is_private(o) ? " -> NULL (private)" : "");
    return is_private(o) ? NULL : o->mem;
  }
  if (o && o->cls == C_STRING && is(op, "UTF8String")) return o->text;
  unrecognized(self, op);
  return NULL;
}

static double sim_msg_d(tc_id self, tc_sel op) {
  sobj *o = obj(self);
  if (o && o->cls == C_CB && is(op, "GPUStartTime")) return o->t0;
  if (o && o->cls == C_CB && is(op, "GPUEndTime")) return o->t1;
  unrecognized(self, op);
  return 0;
}

static tc_os_version sim_msg_r(tc_id self, tc_sel op) {
  sobj *o = obj(self);
  if (o && o->cls == C_PROCINFO && is(op, "operatingSystemVersion")) {
    tc_mtl_sim_config c = config();
    record("operatingSystemVersion -> %ld.%ld.%ld", c.os_major, c.os_minor, c.os_patch);
    return (tc_os_version){c.os_major, c.os_minor, c.os_patch};
  }
  unrecognized(self, op);
  return (tc_os_version){0, 0, 0};
}

static long sim_sdk_version(void) {
  tc_mtl_sim_config c = config();
  return c.sdk_version;
}

static const tc_objc_api g_sim_api = {
    .name = "simulated Metal device",
    .simulated = true,
    .getClass = sim_get_class,
    .getProtocol = sim_get_protocol,
    .registerName = sim_register_name,
    .retain = sim_retain,
    .release = sim_release,
    .poolPush = sim_pool_push,
    .poolPop = sim_pool_pop,
    .MTLCreateSystemDefaultDevice = sim_create_device,
    .dataCreate = sim_data_create,
    .dataRelease = sim_release,
    .msg_o = sim_msg_o,
    .msg_o_p = sim_msg_o_p,
    .msg_o_uu = sim_msg_o_uu,
    .msg_o_ooe = sim_msg_o_ooe,
    .msg_o_oe = sim_msg_o_oe,
    .msg_v = sim_msg_v,
    .msg_v_u = sim_msg_v_u,
    .msg_v_o = sim_msg_v_o,
    .msg_v_ouu = sim_msg_v_ouu,
    .msg_v_puu = sim_msg_v_puu,
    .msg_v_uu = sim_msg_v_uu,
    .msg_v_ss = sim_msg_v_ss,
    .msg_v_ououu = sim_msg_v_ououu,
    .msg_u = sim_msg_u,
    .msg_b_l = sim_msg_b_l,
    .msg_b_o = sim_msg_b_o,
    .msg_p = sim_msg_p,
    .msg_d = sim_msg_d,
    .msg_r = sim_msg_r,
    .sdkVersion = sim_sdk_version,
};

const tc_objc_api *tc_objc_sim(void) { return &g_sim_api; }
