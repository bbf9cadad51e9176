/* cli_metal.c: what `tilec run --target metal --backend metal` needs around the library: Metal
 * buffers for the tensors in the storage mode in force (the target option storage_mode, else
 * $TILEC_METAL_STORAGE_MODE, else private), copies both ways (a blit for private buffers,
 * `contents` for shared ones; uploads are encoded into the queue's open command buffer, so they
 * run chained with the dispatch that follows), and timing with the command buffer's GPU
 * timestamps. Uses the library's Metal runtime (src/target/metal/runtime.h): Metal.framework on
 * macOS, the simulated device elsewhere. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "target/metal/runtime.h"
#include "target/target.h"

struct cli_mtl {
  tc_mtl_rt *rt;
  tc_mtl_storage mode;
  const char *source;
};

cli_mtl *cli_mtl_open(const char *target, int *exit_code, char *why, size_t cap) {
  *exit_code = CLI_EXIT_USAGE;
  tc_target_spec spec;
  tilec_error err = {0};
  tc_mtl_storage opt = TC_MTL_STORAGE_UNSET;
  if (!tc_target_spec_parse(target, &spec, &err)) {
    snprintf(why, cap, "%s", err.message);
    return NULL;
  }
  for (int i = 0; i < spec.nopts; i++)
    if (strcmp(spec.opts[i].key, "storage_mode") == 0 && !tc_mtl_storage_parse(spec.opts[i].value, &opt)) {
      snprintf(why, cap, "storage_mode=%s: expected private or shared", spec.opts[i].value);
      return NULL;
    }
  cli_mtl *m = calloc(1, sizeof *m);
  if (!m) {
    *exit_code = CLI_EXIT_TARGET;
    snprintf(why, cap, "out of memory");
    return NULL;
  }
  if (tc_mtl_storage_resolve(opt, &m->mode, &m->source, &err) != TILEC_OK) {
    snprintf(why, cap, "%s", err.message);
    free(m);
    return NULL;
  }
  *exit_code = CLI_EXIT_TARGET;
  if (!(m->rt = tc_mtl_rt_shared(why, cap))) {
    free(m);
    return NULL;
  }
  return m;
}

void cli_mtl_close(cli_mtl *m) { free(m); } /* the runtime is the process's */

const char *cli_mtl_storage(const cli_mtl *m, const char **source) {
  if (source) *source = m->source;
  return tc_mtl_storage_name(m->mode);
}

void *cli_mtl_alloc(cli_mtl *m, size_t bytes, char *why, size_t cap) {
  tc_id b = NULL;
  tilec_error err = {0};
  if (tc_mtl_buffer_new(m->rt, bytes, m->mode, &b, &err) != TILEC_OK) {
    snprintf(why, cap, "%s", err.message);
    return NULL;
  }
  return b;
}

void cli_mtl_free(cli_mtl *m, void *buffer) {
  if (m && buffer) tc_mtl_buffer_release(m->rt, buffer);
}

int cli_mtl_copy(cli_mtl *m, void *buffer, void *host, size_t n, int to_device, char *why, size_t cap) {
  tilec_error err = {0};
  tilec_status st = to_device ? tc_mtl_upload(m->rt, NULL, buffer, 0, host, n, &err)
                              : tc_mtl_download(m->rt, NULL, buffer, 0, host, n, &err);
  if (st != TILEC_OK) {
    snprintf(why, cap, "%s", err.message);
    return -1;
  }
  return 0;
}

/* Each run is one command buffer holding one dispatch; its time is GPUEndTime - GPUStartTime. */
int cli_mtl_bench(cli_mtl *m, tilec_kernel *k, DLTensor *const *args, size_t n, double *times, int cap, int *nruns,
                  tilec_error *err) {
  *nruns = 0;
  for (int w = 0; w < 3; w++)
    if (tilec_kernel_launch(k, args, n, err) != TILEC_OK) return -1;
  double total = 0;
  while (*nruns < cap && (*nruns < 10 || total < 1000)) {
    double ms = 0;
    if (tilec_kernel_launch_stream(k, args, n, NULL, err) != TILEC_OK || tc_mtl_flush(m->rt, NULL, &ms, err) != TILEC_OK)
      return -1;
    times[(*nruns)++] = ms;
    total += ms;
  }
  return 0;
}
