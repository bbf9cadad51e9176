/* runtime.c: the Metal runtime over the function table (runtime.h, objc.h).
 *
 * Every entry point pushes an autorelease pool and pops it before returning, so the
 * autoreleased objects Metal hands out (command buffers, encoders, strings, errors) never
 * outlive the call that made them; what is kept across calls (a queue's open command buffer)
 * is retained explicitly. */
#include "target/metal/runtime.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/diag.h"
#include "util/strbuf.h"

#define MAX_BATCHES 16

/* ---- storage modes ---- */

bool tc_mtl_storage_parse(const char *text, tc_mtl_storage *out) {
  if (text && strcmp(text, "private") == 0) *out = TC_MTL_STORAGE_PRIVATE;
  else if (text && strcmp(text, "shared") == 0) *out = TC_MTL_STORAGE_SHARED;
  else return false;
  return true;
}

const char *tc_mtl_storage_name(tc_mtl_storage m) {
  return m == TC_MTL_STORAGE_SHARED ? "shared" : m == TC_MTL_STORAGE_PRIVATE ? "private" : "unset";
}

tilec_status tc_mtl_storage_resolve(tc_mtl_storage option, tc_mtl_storage *mode, const char **source, tilec_error *err) {
  if (option != TC_MTL_STORAGE_UNSET) {
    *mode = option;
    *source = "target option storage_mode";
    return TILEC_OK;
  }
  const char *env = getenv("TILEC_METAL_STORAGE_MODE");
  if (env && *env) {
    if (!tc_mtl_storage_parse(env, mode)) {
      tc_error(err, TILEC_ERROR_USAGE, "TILEC_METAL_STORAGE_MODE='%s' is not a storage mode (private, shared)", env);
      return TILEC_ERROR_USAGE;
    }
    *source = "TILEC_METAL_STORAGE_MODE";
    return TILEC_OK;
  }
  *mode = TC_MTL_STORAGE_PRIVATE;
  *source = "default";
  return TILEC_OK;
}

/* ---- the language version ---- */

void tc_mtl_language_text(tc_nsuint lang, char *out, size_t cap) {
  snprintf(out, cap, "%lu.%lu", lang >> 16, lang & 0xffff);
}

tc_nsuint tc_mtl_choose_language(long os_major, long os_minor, long sdk, bool metal3, bool metal4, char *why, size_t cap) {
  long sdk_major = sdk / 10000, sdk_minor = sdk / 100 % 100;
  if (os_major >= 26 && sdk_major >= 26 && metal4) {
    snprintf(why, cap, "Metal 4.0: macOS %ld.%ld, SDK %ld.%ld and a GPU of family Metal4", os_major, os_minor, sdk_major,
             sdk_minor);
    return TC_MTL_LANGUAGE(4, 0);
  }
  char no4[160];
  if (sdk_major < 26) snprintf(no4, sizeof no4, "the SDK is %ld.%ld (Metal 4 needs 26)", sdk_major, sdk_minor);
  else if (os_major < 26) snprintf(no4, sizeof no4, "macOS is %ld.%ld (Metal 4 needs 26)", os_major, os_minor);
  else snprintf(no4, sizeof no4, "the GPU is not of family Metal4");
  long v = os_major < sdk_major ? os_major : sdk_major;
  tc_nsuint lang = v >= 15 ? TC_MTL_LANGUAGE(3, 2) : v >= 14 ? TC_MTL_LANGUAGE(3, 1) : TC_MTL_LANGUAGE(3, 0);
  if (v < 13 || !metal3) {
    snprintf(why, cap, "Metal 2.4: %s", !metal3 ? "the GPU is not of family Metal3" : "macOS or the SDK is older than 13");
    return TC_MTL_LANGUAGE(2, 4);
  }
  char t[48];
  tc_mtl_language_text(lang, t, sizeof t);
  snprintf(why, cap, "Metal %s: no Metal 4 because %s; macOS %ld.%ld, SDK %ld.%ld", t, no4, os_major, os_minor,
           sdk_major, sdk_minor);
  return lang;
}

/* ---- the runtime ---- */

typedef struct batch {
  tc_id queue; /* not retained: the caller's queue outlives its work, tilec's is the runtime's */
  tc_id cb;    /* retained; NULL when nothing is open */
  int ndispatch;
  tc_id *staging; /* retained staging buffers, released once the batch has run */
  int nstaging, capstaging;
  /* downloads waiting for the batch: copy staging -> host after it ran */
  struct pending_copy {
    tc_id staging;
    void *dst;
    size_t n;
  } *copies;
  int ncopies, capcopies;
} batch;

struct tc_mtl_rt {
  const tc_objc_api *api;
  tc_mtl_sels s;
  tc_id device, queue, buffer_protocol, queue_protocol;
  tc_nsuint lang;
  char lang_why[256];
  size_t max_tg_mem;
  pthread_mutex_t mu;
  batch batches[MAX_BATCHES];
  int nbatches;
};

struct tc_mtl_kernel {
  tc_mtl_rt *rt;
  tc_id library, function, pso;
  char entry[128];
  uint32_t threads[3];
  size_t tg_mem;
};

const tc_objc_api *tc_mtl_rt_api(const tc_mtl_rt *rt) { return rt->api; }
tc_id tc_mtl_rt_queue(const tc_mtl_rt *rt) { return rt->queue; }
tc_nsuint tc_mtl_rt_language(const tc_mtl_rt *rt) { return rt->lang; }
const char *tc_mtl_rt_language_why(const tc_mtl_rt *rt) { return rt->lang_why; }
size_t tc_mtl_rt_max_threadgroup_memory(const tc_mtl_rt *rt) { return rt->max_tg_mem; }

/* An NSString (autoreleased) from C text. */
static tc_id nsstring(const tc_mtl_rt *rt, const char *s) {
  return rt->api->msg_o_p(rt->api->getClass("NSString"), rt->s.stringWithUTF8String, s);
}

/* An NSError's localizedDescription as C text (into out). */
static void error_text(const tc_mtl_rt *rt, tc_id e, char *out, size_t cap) {
  const char *t = NULL;
  if (e) {
    tc_id d = rt->api->msg_o(e, rt->s.localizedDescription);
    if (d) t = rt->api->msg_p(d, rt->s.UTF8String);
  }
  snprintf(out, cap, "%s", t ? t : "no description");
}

tilec_status tc_mtl_rt_open(const tc_objc_api *api, tc_mtl_rt **out, tilec_error *err) {
  *out = NULL;
  tc_mtl_rt *rt = calloc(1, sizeof *rt);
  if (!rt) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory opening the Metal device");
    return TILEC_ERROR_NOMEM;
  }
  rt->api = api;
  tc_mtl_sels_init(api, &rt->s);
  pthread_mutex_init(&rt->mu, NULL);
  void *pool = api->poolPush();
  tilec_status st = TILEC_OK;
  rt->device = api->MTLCreateSystemDefaultDevice(); /* +1 */
  if (!rt->device) {
    tc_error(err, TILEC_ERROR_TARGET, "no Metal device (%s: MTLCreateSystemDefaultDevice returned nil)", api->name);
    st = TILEC_ERROR_TARGET;
    goto done;
  }
  rt->queue = api->msg_o(rt->device, rt->s.newCommandQueue); /* +1 */
  rt->buffer_protocol = api->getProtocol("MTLBuffer");
  rt->queue_protocol = api->getProtocol("MTLCommandQueue");
  if (!rt->queue) {
    tc_error(err, TILEC_ERROR_TARGET, "the Metal device gave no command queue (newCommandQueue returned nil)");
    st = TILEC_ERROR_TARGET;
    goto done;
  }
  tc_id pi = api->msg_o(api->getClass("NSProcessInfo"), rt->s.processInfo);
  tc_os_version os = pi ? api->msg_r(pi, rt->s.operatingSystemVersion) : (tc_os_version){0, 0, 0};
  bool m3 = api->msg_b_l(rt->device, rt->s.supportsFamily, TC_MTL_FAMILY_METAL3) != 0;
  bool m4 = api->msg_b_l(rt->device, rt->s.supportsFamily, TC_MTL_FAMILY_METAL4) != 0;
  rt->max_tg_mem = api->msg_u(rt->device, rt->s.maxThreadgroupMemoryLength);
  rt->lang = tc_mtl_choose_language(os.major, os.minor, api->sdkVersion(), m3, m4, rt->lang_why, sizeof rt->lang_why);
done:
  api->poolPop(pool);
  if (st != TILEC_OK) {
    tc_mtl_rt_close(rt);
    return st;
  }
  *out = rt;
  return TILEC_OK;
}

static void batch_clear(tc_mtl_rt *rt, batch *b) {
  for (int i = 0; i < b->nstaging; i++) rt->api->release(b->staging[i]);
  free(b->staging);
  free(b->copies);
  if (b->cb) rt->api->release(b->cb);
  tc_id q = b->queue;
  *b = (batch){0};
  b->queue = q;
}

void tc_mtl_rt_close(tc_mtl_rt *rt) {
  if (!rt) return;
  for (int i = 0; i < rt->nbatches; i++) {
    tc_mtl_flush(rt, rt->batches[i].queue, NULL, NULL);
    batch_clear(rt, &rt->batches[i]);
  }
  if (rt->queue) rt->api->release(rt->queue);
  if (rt->device) rt->api->release(rt->device);
  pthread_mutex_destroy(&rt->mu);
  free(rt);
}

static pthread_once_t g_shared_once = PTHREAD_ONCE_INIT;
static tc_mtl_rt *g_shared;
static char g_shared_why[sizeof((tilec_error *)0)->message];

static void open_shared(void) {
  char why[256];
  const tc_objc_api *api = tc_objc_apple(why, sizeof why);
#ifdef __APPLE__
  if (!api) {
    snprintf(g_shared_why, sizeof g_shared_why, "%s", why);
    return;
  }
#else
  (void)api;
  api = tc_objc_sim();
#endif
  tilec_error err = {0};
  if (tc_mtl_rt_open(api, &g_shared, &err) != TILEC_OK) snprintf(g_shared_why, sizeof g_shared_why, "%s", err.message);
}

tc_mtl_rt *tc_mtl_rt_shared(char *why, size_t cap) {
  pthread_once(&g_shared_once, open_shared);
  if (!g_shared && why && cap) snprintf(why, cap, "%s", g_shared_why);
  return g_shared;
}

/* A caller's queue (a stream) must be an MTLCommandQueue; NULL means tilec's. */
static tilec_status check_queue(tc_mtl_rt *rt, tc_id *queue, tilec_error *err) {
  if (!*queue) *queue = rt->queue;
  if (*queue != rt->queue &&
      (!rt->queue_protocol || !rt->api->msg_b_o(*queue, rt->s.conformsToProtocol, rt->queue_protocol))) {
    tc_error(err, TILEC_ERROR_USAGE, "the stream given for Metal is not an MTLCommandQueue");
    return TILEC_ERROR_USAGE;
  }
  return TILEC_OK;
}

/* ---- batches: one open command buffer per queue (under rt->mu) ---- */

static batch *batch_of(tc_mtl_rt *rt, tc_id queue, tilec_error *err) {
  for (int i = 0; i < rt->nbatches; i++)
    if (rt->batches[i].queue == queue) return &rt->batches[i];
  /* Reuse a slot whose queue has nothing open. */
  for (int i = 0; i < rt->nbatches; i++)
    if (!rt->batches[i].cb && rt->batches[i].queue != rt->queue) {
      rt->batches[i].queue = queue;
      return &rt->batches[i];
    }
  if (rt->nbatches == MAX_BATCHES) {
    tc_error(err, TILEC_ERROR_USAGE, "more than %d Metal command queues have work pending; synchronize some first",
             MAX_BATCHES);
    return NULL;
  }
  batch *b = &rt->batches[rt->nbatches++];
  *b = (batch){0};
  b->queue = queue;
  return b;
}

/* The batch's command buffer, made (and retained) when none is open. */
static tc_id batch_cb(tc_mtl_rt *rt, batch *b, tilec_error *err) {
  if (!b->cb) {
    tc_id cb = rt->api->msg_o(b->queue, rt->s.commandBuffer);
    if (!cb) {
      tc_error(err, TILEC_ERROR_TARGET, "the Metal queue gave no command buffer");
      return NULL;
    }
    b->cb = rt->api->retain(cb);
    b->ndispatch = 0;
  }
  return b->cb;
}

static bool keep_staging(batch *b, tc_id staging) {
  if (b->nstaging == b->capstaging) {
    int cap = b->capstaging ? 2 * b->capstaging : 8;
    tc_id *p = realloc(b->staging, (size_t)cap * sizeof *p);
    if (!p) return false;
    b->staging = p;
    b->capstaging = cap;
  }
  b->staging[b->nstaging++] = staging;
  return true;
}

/* Takes the open batch of `queue` out (under the lock); taken->cb is NULL when none is open. */
static void take_batch(tc_mtl_rt *rt, tc_id queue, batch *taken) {
  *taken = (batch){0};
  for (int i = 0; i < rt->nbatches; i++)
    if (rt->batches[i].queue == queue && rt->batches[i].cb) {
      *taken = rt->batches[i];
      rt->batches[i] = (batch){0};
      rt->batches[i].queue = queue;
      return;
    }
}

tilec_status tc_mtl_flush(tc_mtl_rt *rt, tc_id queue, double *gpu_ms, tilec_error *err) {
  if (gpu_ms) *gpu_ms = 0;
  tilec_status qs = check_queue(rt, &queue, err);
  if (qs != TILEC_OK) return qs;
  batch b;
  pthread_mutex_lock(&rt->mu);
  take_batch(rt, queue, &b);
  pthread_mutex_unlock(&rt->mu);
  if (!b.cb) return TILEC_OK;
  const tc_objc_api *api = rt->api;
  void *pool = api->poolPush();
  api->msg_v(b.cb, rt->s.commit);
  api->msg_v(b.cb, rt->s.waitUntilCompleted);
  tilec_status st = TILEC_OK;
  tc_nsuint status = api->msg_u(b.cb, rt->s.status);
  if (status != TC_MTL_CB_COMPLETED) {
    char text[900];
    error_text(rt, api->msg_o(b.cb, rt->s.error), text, sizeof text);
    tc_error(err, TILEC_ERROR_TARGET, "a Metal command buffer failed (status %lu): %s", status, text);
    st = TILEC_ERROR_TARGET;
  } else {
    if (gpu_ms) *gpu_ms = (api->msg_d(b.cb, rt->s.GPUEndTime) - api->msg_d(b.cb, rt->s.GPUStartTime)) * 1e3;
    for (int i = 0; i < b.ncopies; i++) {
      const void *p = api->msg_p(b.copies[i].staging, rt->s.contents);
      if (p) memcpy(b.copies[i].dst, p, b.copies[i].n);
    }
  }
  api->poolPop(pool);
  batch_clear(rt, &b);
  return st;
}

/* ---- buffers ---- */

tilec_status tc_mtl_buffer_new(tc_mtl_rt *rt, size_t bytes, tc_mtl_storage mode, tc_id *out, tilec_error *err) {
  tc_nsuint opts = mode == TC_MTL_STORAGE_SHARED ? TC_MTL_RESOURCE_STORAGE_SHARED : TC_MTL_RESOURCE_STORAGE_PRIVATE;
  *out = rt->api->msg_o_uu(rt->device, rt->s.newBufferWithLength_options, bytes ? bytes : 1, opts);
  if (!*out) {
    tc_error(err, TILEC_ERROR_TARGET, "the Metal device could not allocate a %s buffer of %zu bytes", tc_mtl_storage_name(mode),
             bytes);
    return TILEC_ERROR_TARGET;
  }
  return TILEC_OK;
}

void tc_mtl_buffer_release(tc_mtl_rt *rt, tc_id buffer) {
  if (buffer) rt->api->release(buffer);
}

bool tc_mtl_buffer_info(tc_mtl_rt *rt, tc_id obj, size_t *length, tc_mtl_storage *mode) {
  if (!obj || !rt->buffer_protocol || !rt->api->msg_b_o(obj, rt->s.conformsToProtocol, rt->buffer_protocol)) return false;
  if (length) *length = rt->api->msg_u(obj, rt->s.length);
  if (mode) *mode = rt->api->msg_u(obj, rt->s.storageMode) == 2 ? TC_MTL_STORAGE_PRIVATE : TC_MTL_STORAGE_SHARED;
  return true;
}

static tilec_status check_range(tc_mtl_rt *rt, tc_id buffer, size_t offset, size_t n, tc_mtl_storage *mode,
                                const char *what, tilec_error *err) {
  size_t len = 0;
  if (!tc_mtl_buffer_info(rt, buffer, &len, mode)) {
    tc_error(err, TILEC_ERROR_USAGE, "%s: not a Metal buffer", what);
    return TILEC_ERROR_USAGE;
  }
  if (offset > len || n > len - offset) {
    tc_error(err, TILEC_ERROR_USAGE, "%s: bytes [%zu, %zu) are outside the buffer's %zu", what, offset, offset + n, len);
    return TILEC_ERROR_USAGE;
  }
  return TILEC_OK;
}

/* Encodes a blit copy into the batch of `queue` (under rt->mu, in a pool). */
static tilec_status encode_blit(tc_mtl_rt *rt, batch *b, tc_id src, size_t so, tc_id dst, size_t dof, size_t n,
                                tilec_error *err) {
  tc_id cb = batch_cb(rt, b, err);
  if (!cb) return TILEC_ERROR_TARGET;
  tc_id enc = rt->api->msg_o(cb, rt->s.blitCommandEncoder);
  if (!enc) {
    tc_error(err, TILEC_ERROR_TARGET, "the Metal command buffer gave no blit encoder");
    return TILEC_ERROR_TARGET;
  }
  rt->api->msg_v_ououu(enc, rt->s.copyFromBuffer_sourceOffset_toBuffer_destinationOffset_size, src, so, dst, dof, n);
  rt->api->msg_v(enc, rt->s.endEncoding);
  return TILEC_OK;
}

tilec_status tc_mtl_upload(tc_mtl_rt *rt, tc_id queue, tc_id buffer, size_t offset, const void *src, size_t n,
                           tilec_error *err) {
  tc_mtl_storage mode;
  tilec_status st = check_queue(rt, &queue, err);
  if (st == TILEC_OK) st = check_range(rt, buffer, offset, n, &mode, "copying to a Metal buffer", err);
  if (st != TILEC_OK || !n) return st;
  const tc_objc_api *api = rt->api;
  if (mode == TC_MTL_STORAGE_SHARED) {
    /* pending GPU work may still read the old bytes: let it finish first */
    if ((st = tc_mtl_flush(rt, queue, NULL, err)) != TILEC_OK) return st;
    unsigned char *p = api->msg_p(buffer, rt->s.contents);
    if (!p) {
      tc_error(err, TILEC_ERROR_TARGET, "a shared Metal buffer has no contents");
      return TILEC_ERROR_TARGET;
    }
    memcpy(p + offset, src, n);
    return TILEC_OK;
  }
  tc_id staging;
  if ((st = tc_mtl_buffer_new(rt, n, TC_MTL_STORAGE_SHARED, &staging, err)) != TILEC_OK) return st;
  unsigned char *p = api->msg_p(staging, rt->s.contents);
  if (!p) {
    api->release(staging);
    tc_error(err, TILEC_ERROR_TARGET, "a shared Metal staging buffer has no contents");
    return TILEC_ERROR_TARGET;
  }
  memcpy(p, src, n);
  void *pool = api->poolPush();
  pthread_mutex_lock(&rt->mu);
  batch *b = batch_of(rt, queue, err);
  if (!b) st = TILEC_ERROR_USAGE;
  else if ((st = encode_blit(rt, b, staging, 0, buffer, offset, n, err)) == TILEC_OK && !keep_staging(b, staging)) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory copying to a Metal buffer");
    st = TILEC_ERROR_NOMEM;
  }
  if (st == TILEC_OK) staging = NULL; /* the batch owns it */
  pthread_mutex_unlock(&rt->mu);
  api->poolPop(pool);
  if (staging) api->release(staging);
  return st;
}

tilec_status tc_mtl_download(tc_mtl_rt *rt, tc_id queue, tc_id buffer, size_t offset, void *dst, size_t n,
                             tilec_error *err) {
  tc_mtl_storage mode;
  tilec_status st = check_queue(rt, &queue, err);
  if (st == TILEC_OK) st = check_range(rt, buffer, offset, n, &mode, "copying from a Metal buffer", err);
  if (st != TILEC_OK || !n) return st;
  const tc_objc_api *api = rt->api;
  if (mode == TC_MTL_STORAGE_SHARED) {
    if ((st = tc_mtl_flush(rt, queue, NULL, err)) != TILEC_OK) return st;
    const unsigned char *p = api->msg_p(buffer, rt->s.contents);
    if (!p) {
      tc_error(err, TILEC_ERROR_TARGET, "a shared Metal buffer has no contents");
      return TILEC_ERROR_TARGET;
    }
    memcpy(dst, p + offset, n);
    return TILEC_OK;
  }
  tc_id staging;
  if ((st = tc_mtl_buffer_new(rt, n, TC_MTL_STORAGE_SHARED, &staging, err)) != TILEC_OK) return st;
  void *pool = api->poolPush();
  pthread_mutex_lock(&rt->mu);
  batch *b = batch_of(rt, queue, err);
  if (!b) st = TILEC_ERROR_USAGE;
  else if ((st = encode_blit(rt, b, buffer, offset, staging, 0, n, err)) == TILEC_OK) {
    if (b->ncopies == b->capcopies) {
      int cap = b->capcopies ? 2 * b->capcopies : 8;
      struct pending_copy *c = realloc(b->copies, (size_t)cap * sizeof *c);
      if (c) b->copies = c, b->capcopies = cap;
    }
    if (b->ncopies < b->capcopies && keep_staging(b, staging)) {
      b->copies[b->ncopies++] = (struct pending_copy){staging, dst, n};
      staging = NULL;
    } else {
      tc_error(err, TILEC_ERROR_NOMEM, "out of memory copying from a Metal buffer");
      st = TILEC_ERROR_NOMEM;
    }
  }
  pthread_mutex_unlock(&rt->mu);
  api->poolPop(pool);
  if (staging) api->release(staging);
  if (st == TILEC_OK) st = tc_mtl_flush(rt, queue, NULL, err);
  return st;
}

/* ---- kernels ---- */

void tc_mtl_kernel_free(tc_mtl_kernel *k) {
  if (!k) return;
  const tc_objc_api *api = k->rt->api;
  if (k->pso) api->release(k->pso);
  if (k->function) api->release(k->function);
  if (k->library) api->release(k->library);
  free(k);
}

static tilec_status kernel_create(tc_mtl_rt *rt, const char *name, const char *source, const void *lib_data,
                                  size_t lib_size, const char *entry, tc_nsuint needs, const uint32_t threads[3],
                                  size_t tg_mem, tc_mtl_kernel **out, tilec_error *err) {
  *out = NULL;
  const tc_objc_api *api = rt->api;
  char have[48], want[48];
  tc_mtl_language_text(rt->lang, have, sizeof have);
  tc_mtl_language_text(needs, want, sizeof want);
  if (needs > rt->lang) {
    tc_error(err, TILEC_ERROR_TARGET,
             "kernel '%s' needs Metal %s%s, but this machine compiles Metal %s at most (%s)%s", name, want,
             needs >= TC_MTL_LANGUAGE(4, 0) ? " (cooperative tensors, MetalPerformancePrimitives)" : "", have, rt->lang_why,
             needs >= TC_MTL_LANGUAGE(4, 0) ? "; compile it without metal4=1" : "");
    return TILEC_ERROR_TARGET;
  }
  if (strlen(entry) >= sizeof((tc_mtl_kernel *)0)->entry) {
    tc_error(err, TILEC_ERROR_INTERNAL, "Metal kernel entry name too long");
    return TILEC_ERROR_INTERNAL;
  }
  tc_mtl_kernel *k = calloc(1, sizeof *k);
  if (!k) {
    tc_error(err, TILEC_ERROR_NOMEM, "out of memory compiling '%s' for Metal", name);
    return TILEC_ERROR_NOMEM;
  }
  k->rt = rt;
  snprintf(k->entry, sizeof k->entry, "%s", entry);
  memcpy(k->threads, threads, sizeof k->threads);
  k->tg_mem = tg_mem;
  tilec_status st = TILEC_OK;
  void *pool = api->poolPush();
  tc_id e = NULL;
  if (source) {
    tc_id opts = api->msg_o(api->msg_o(api->getClass("MTLCompileOptions"), rt->s.alloc), rt->s.init); /* +1 */
    if (opts) api->msg_v_u(opts, rt->s.setLanguageVersion, rt->lang);
    /* Metal compiles with fast math unless told otherwise: it may assume no NaN or inf (x != x,
     * a -inf start of a max, an inf test folded away) and trade precision in exp and division,
     * so kernels would differ from the reference. BOOL NO goes as an integer 0 in a register. */
    if (opts) api->msg_v_u(opts, rt->s.setFastMathEnabled, 0);
    tc_id src = nsstring(rt, source);
    k->library = src ? api->msg_o_ooe(rt->device, rt->s.newLibraryWithSource_options_error, src, opts, &e) : NULL;
    if (opts) api->release(opts);
  } else {
    tc_id data = api->dataCreate(lib_data, lib_size, NULL, NULL);
    k->library = data ? api->msg_o_oe(rt->device, rt->s.newLibraryWithData_error, data, &e) : NULL;
    if (data) api->dataRelease(data);
  }
  if (!k->library) {
    char text[3000];
    error_text(rt, e, text, sizeof text);
    if (source) tc_error(err, TILEC_ERROR_TARGET, "Metal could not compile kernel '%s' (MSL %s):\n%s", name, have, text);
    else tc_error(err, TILEC_ERROR_TARGET, "Metal could not load the metallib of kernel '%s': %s", name, text);
    st = TILEC_ERROR_TARGET;
    goto done;
  }
  k->function = api->msg_o_p(k->library, rt->s.newFunctionWithName, nsstring(rt, entry));
  if (!k->function) {
    tc_error(err, TILEC_ERROR_TARGET, "the Metal library of '%s' has no function '%s'", name, entry);
    st = TILEC_ERROR_TARGET;
    goto done;
  }
  e = NULL;
  k->pso = api->msg_o_oe(rt->device, rt->s.newComputePipelineStateWithFunction_error, k->function, &e);
  if (!k->pso) {
    char text[900];
    error_text(rt, e, text, sizeof text);
    tc_error(err, TILEC_ERROR_TARGET, "Metal could not make the pipeline of '%s': %s", name, text);
    st = TILEC_ERROR_TARGET;
    goto done;
  }
  tc_nsuint max_threads = api->msg_u(k->pso, rt->s.maxTotalThreadsPerThreadgroup);
  uint64_t nthreads = (uint64_t)threads[0] * threads[1] * threads[2];
  if (nthreads > max_threads) {
    tc_error(err, TILEC_ERROR_TARGET, "kernel '%s' runs %llu threads per threadgroup; its Metal pipeline allows %lu", name,
             (unsigned long long)nthreads, max_threads);
    st = TILEC_ERROR_TARGET;
    goto done;
  }
  if (tg_mem > rt->max_tg_mem) {
    tc_error(err, TILEC_ERROR_TARGET, "kernel '%s' needs %zu bytes of threadgroup memory; the Metal device has %zu", name,
             tg_mem, rt->max_tg_mem);
    st = TILEC_ERROR_TARGET;
  }
done:
  api->poolPop(pool);
  if (st != TILEC_OK) tc_mtl_kernel_free(k);
  else *out = k;
  return st;
}

tilec_status tc_mtl_kernel_create(tc_mtl_rt *rt, const char *name, const char *source, const char *entry, tc_nsuint needs,
                                  const uint32_t threads[3], size_t tg_mem, tc_mtl_kernel **out, tilec_error *err) {
  return kernel_create(rt, name, source, NULL, 0, entry, needs, threads, tg_mem, out, err);
}

tilec_status tc_mtl_kernel_from_metallib(tc_mtl_rt *rt, const char *name, const void *metallib, size_t size,
                                         const char *entry, tc_nsuint needs, const uint32_t threads[3], size_t tg_mem,
                                         tc_mtl_kernel **out, tilec_error *err) {
  return kernel_create(rt, name, NULL, metallib, size, entry, needs, threads, tg_mem, out, err);
}

tilec_status tc_mtl_dispatch(tc_mtl_rt *rt, tc_id queue, tc_mtl_kernel *k, const tc_mtl_arg *args, int nargs,
                             const uint32_t groups[3], bool wait, tilec_error *err) {
  if (check_queue(rt, &queue, err) != TILEC_OK) return TILEC_ERROR_USAGE;
  const tc_objc_api *api = rt->api;
  for (int i = 0; i < nargs; i++)
    if (args[i].bytes && args[i].nbytes > 4096) {
      tc_error(err, TILEC_ERROR_INTERNAL, "Metal argument %d: %zu bytes by value (setBytes takes at most 4096)", i,
               args[i].nbytes);
      return TILEC_ERROR_INTERNAL;
    }
  tilec_status st = TILEC_OK;
  void *pool = api->poolPush();
  pthread_mutex_lock(&rt->mu);
  batch *b = batch_of(rt, queue, err);
  tc_id cb = b ? batch_cb(rt, b, err) : NULL;
  tc_id enc = cb ? api->msg_o(cb, rt->s.computeCommandEncoder) : NULL;
  if (!enc) {
    if (err && err->status == TILEC_OK) tc_error(err, TILEC_ERROR_TARGET, "the Metal command buffer gave no compute encoder");
    st = err ? err->status : TILEC_ERROR_TARGET;
  } else {
    api->msg_v_o(enc, rt->s.setComputePipelineState, k->pso);
    for (int i = 0; i < nargs; i++) {
      if (args[i].bytes) api->msg_v_puu(enc, rt->s.setBytes_length_atIndex, args[i].bytes, args[i].nbytes, (tc_nsuint)i);
      else api->msg_v_ouu(enc, rt->s.setBuffer_offset_atIndex, args[i].buffer, args[i].offset, (tc_nsuint)i);
    }
    if (k->tg_mem) api->msg_v_uu(enc, rt->s.setThreadgroupMemoryLength_atIndex, (k->tg_mem + 15) & ~(size_t)15, 0);
    tc_mtl_size g = {groups[0], groups[1], groups[2]}, t = {k->threads[0], k->threads[1], k->threads[2]};
    api->msg_v_ss(enc, rt->s.dispatchThreadgroups_threadsPerThreadgroup, g, t);
    api->msg_v(enc, rt->s.endEncoding);
    b->ndispatch++;
  }
  pthread_mutex_unlock(&rt->mu);
  api->poolPop(pool);
  if (st == TILEC_OK && wait) st = tc_mtl_flush(rt, queue, NULL, err);
  return st;
}
