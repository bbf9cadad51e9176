/* cli_verify.c: `tilec verify FILE`: run one kernel on every execution backend that is available
 * here, from the same seeded inputs, and compare every output with one reference (the reference
 * interpreter, or the cpu backend with --reference cpu). Backends come from the library's registry
 * (tilec_backend_count/_get); tensors for a backend whose device is not the host live in memory
 * from tilec_device_alloc, so a new backend appears here without a change. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "verify/compare.h"

typedef struct vtensor {
  tc_dtype dt;
  int64_t shape[16];
  int ndim;
  size_t numel, nbytes;
  DLDataType dl;
  int is_output, is_scalar;
  tc_dtype through; /* tilec_param_info.rounds_through, or TC_DT_INVALID */
  unsigned unordered; /* tilec_param_info.unordered_dims */
  char name[128];
  void *initial;   /* the seeded inputs (and initial outputs) */
  void *reference; /* the reference's result */
} vtensor;

typedef struct vrow {
  char backend[64];
  int status;          /* 0 ran, 1 skipped, 2 failed */
  char reason[1024];
  tilec_compare *cmp;  /* per parameter (outputs only) */
} vrow;

/* Parameter shapes and the seeded initial values, from the kernel compiled for the cpu. */
static int setup_tensors(const cli_options *o, tilec_kernel *k, vtensor *ts, size_t np) {
  for (size_t i = 0; i < np; i++) {
    tilec_param_info pi;
    tilec_kernel_param(k, i, &pi);
    vtensor *t = &ts[i];
    snprintf(t->name, sizeof t->name, "%s", pi.name);
    if (!tc_dtype_lookup(pi.dtype, &t->dt, NULL, 0)) return CLI_EXIT_TARGET;
    t->ndim = pi.ndim;
    t->is_output = pi.is_output;
    t->through = tc_dt(TC_DT_INVALID);
    if (pi.rounds_through) tc_dtype_lookup(pi.rounds_through, &t->through, NULL, 0);
    t->unordered = pi.unordered_dims;
    t->is_scalar = pi.ndim == 0;
    t->dl = pi.dl_dtype.code == 255 ? (DLDataType){kDLUInt, 8, 1} : pi.dl_dtype;
    if (!cli_param_shape(o, k, i, &pi, t->shape)) return CLI_EXIT_USAGE;
    t->numel = 1;
    for (int d = 0; d < pi.ndim; d++) t->numel *= (size_t)t->shape[d];
    t->nbytes = tc_dtype_storage_bytes(t->dt, t->numel);
    t->initial = malloc(t->nbytes ? t->nbytes : 1);
    t->reference = malloc(t->nbytes ? t->nbytes : 1);
    if (!t->initial || !t->reference) return CLI_EXIT_TARGET;
    memset(t->initial, 0, t->nbytes);
    cli_fill_random(t->dt, t->initial, t->numel, pi.name, o->seed);
    memcpy(t->reference, t->initial, t->nbytes);
  }
  return 0;
}

static DLTensor host_view(vtensor *t, void *data) {
  DLTensor d = {data, {kDLCPU, 0}, t->ndim, t->dl, t->ndim ? t->shape : NULL, NULL, 0};
  return d;
}

/* Run k from the initial values; the results land in out[i] (host buffers of nbytes). */
static tilec_status run_on(tilec_context *ctx, tilec_kernel *k, const tilec_backend_info *bi, vtensor *ts, size_t np,
                           void **out, tilec_error *err) {
  DLTensor *dl = calloc(np ? np : 1, sizeof *dl);
  DLTensor **args = calloc(np ? np : 1, sizeof *args);
  void **dev = calloc(np ? np : 1, sizeof *dev);
  tilec_status st = TILEC_OK;
  if (!dl || !args || !dev) {
    st = err->status = TILEC_ERROR_NOMEM;
    snprintf(err->message, sizeof err->message, "out of memory");
    snprintf(err->rendered, sizeof err->rendered, "error: out of memory\n");
    goto done;
  }
  int host = bi->device_type == kDLCPU;
  for (size_t i = 0; i < np && st == TILEC_OK; i++) {
    memcpy(out[i], ts[i].initial, ts[i].nbytes);
    dl[i] = host_view(&ts[i], out[i]);
    if (!host && !ts[i].is_scalar) { /* scalars stay on the host, passed by value */
      dev[i] = tilec_device_alloc(ctx, bi->target, 0, ts[i].nbytes, err);
      if (!dev[i]) st = err->status;
      else st = tilec_device_copy(ctx, bi->target, 0, dev[i], out[i], ts[i].nbytes, TILEC_COPY_HOST_TO_DEVICE, err);
      dl[i].data = dev[i];
      dl[i].device.device_type = (DLDeviceType)bi->device_type;
    }
    args[i] = &dl[i];
  }
  if (st == TILEC_OK) st = tilec_kernel_launch(k, args, np, err);
  for (size_t i = 0; i < np && st == TILEC_OK; i++)
    if (dev[i] && ts[i].is_output)
      st = tilec_device_copy(ctx, bi->target, 0, out[i], dev[i], ts[i].nbytes, TILEC_COPY_DEVICE_TO_HOST, err);
done:
  for (size_t i = 0; dev && i < np; i++) tilec_device_free(ctx, bi->target, 0, dev[i]);
  free(dl);
  free(args);
  free(dev);
  return st;
}

static void one_line(char *dst, size_t cap, const char *text) {
  size_t n = strcspn(text, "\n");
  if (n >= cap) n = cap - 1;
  memcpy(dst, text, n);
  dst[n] = 0;
  char *nl = strchr(dst, '\n');
  if (nl) *nl = 0;
}

int cli_verify(const cli_options *o) {
  const char *refname = o->reference ? o->reference : "interp";
  if (strcmp(refname, "interp") != 0 && strcmp(refname, "cpu") != 0) {
    cli_error("--reference takes interp or cpu, got '%s'\n(see 'tilec --help')", refname);
    return CLI_EXIT_USAGE;
  }
  if (o->target && strcmp(o->target, "auto") != 0) {
    cli_error("'verify' runs every available backend; --target does not apply");
    return CLI_EXIT_USAGE;
  }
  tilec_error err = {0};
  tilec_context *ctx = tilec_context_create(NULL, &err);
  if (!ctx) return cli_report(&err);
  int rc = 0;
  tilec_kernel *cpu = NULL;
  cli_watchdog *watchdog = cli_watchdog_start(o->timeout);

  vtensor *ts = NULL;
  vrow *rows = NULL;
  void **out = NULL;
  size_t np = 0, nb = tilec_backend_count(), nrows = 0;
  tilec_program *prog = tilec_program_from_file(ctx, o->file, &err);
  if (!prog) goto report;
  tilec_compile_options co;
  cli_compile_options(o, &co);
  co.target = "cpu";
  co.backend = NULL;
  cpu = tilec_compile(prog, &co, &err);
  if (!cpu) goto report;
  cli_print_warning(ctx);
  np = tilec_kernel_num_params(cpu);
  ts = calloc(np ? np : 1, sizeof *ts);
  out = calloc(np ? np : 1, sizeof *out);
  rows = calloc(nb ? nb : 1, sizeof *rows);
  if (!ts || !out || !rows) goto nomem;
  if ((rc = setup_tensors(o, cpu, ts, np)) != 0) {
    if (rc == CLI_EXIT_TARGET) goto nomem;
    goto done;
  }
  for (size_t i = 0; i < np; i++)
    if (!(out[i] = malloc(ts[i].nbytes ? ts[i].nbytes : 1))) goto nomem;
  if (o->perturb) {
    int found = 0;
    for (size_t i = 0; i < np; i++) found |= ts[i].is_output && strcmp(ts[i].name, o->perturb) == 0;
    if (!found) {
      cli_error("--perturb needs the name of an output of '%s'", tilec_kernel_name(cpu));
      rc = CLI_EXIT_USAGE;
      goto done;
    }
  }

  /* the reference */
  {
    DLTensor *dl = calloc(np ? np : 1, sizeof *dl);
    DLTensor **args = calloc(np ? np : 1, sizeof *args);
    if (!dl || !args) {
      free(dl);
      free(args);
      goto nomem;
    }
    for (size_t i = 0; i < np; i++) dl[i] = host_view(&ts[i], ts[i].reference), args[i] = &dl[i];
    tilec_status st;
    if (strcmp(refname, "cpu") == 0) {
      cli_watchdog_arm(watchdog, cpu, "on cpu/cc (the reference)");
      st = tilec_kernel_launch(cpu, args, np, &err);
      cli_watchdog_disarm(watchdog);
    } else {
      st = cli_run_reference(o, cpu, args, np, &err);
    }
    free(dl);
    free(args);
    if (st != TILEC_OK) goto report;
  }

  int disagree = 0, failed = 0;
  for (size_t b = 0; b < nb; b++) {
    tilec_backend_info bi;
    if (tilec_backend_get(ctx, b, &bi) != 0) break;
    vrow *r = &rows[nrows++];
    snprintf(r->backend, sizeof r->backend, "%s/%s", bi.target, bi.name);
    if (!bi.available) {
      r->status = 1;
      snprintf(r->reason, sizeof r->reason, "%s", bi.reason);
      continue;
    }
    if (bi.device_type != kDLCPU && !bi.has_memory) {
      r->status = 1;
      snprintf(r->reason, sizeof r->reason, "no device memory for tilec to place the tensors in");
      continue;
    }
    r->cmp = calloc(np ? np : 1, sizeof *r->cmp);
    if (!r->cmp) goto nomem;
    tilec_compile_options bo;
    cli_compile_options(o, &bo);
    bo.target = bi.target;
    bo.backend = bi.name;
    tilec_error e = {0};
    tilec_kernel *k = tilec_compile(prog, &bo, &e);
    char where[160];
    snprintf(where, sizeof where, "on %s", r->backend);
    cli_watchdog_arm(watchdog, k, where);
    tilec_status st = k ? run_on(ctx, k, &bi, ts, np, out, &e) : e.status;
    cli_watchdog_disarm(watchdog);
    tilec_kernel_destroy(k);
    if (st != TILEC_OK) {
      r->status = 2;
      one_line(r->reason, sizeof r->reason, e.rendered[0] ? e.rendered : "failed");
      failed = 1;
      continue;
    }
    bool fp8_products = false; /* a GPU backend's kernel that reads 8-bit float tensors (compare.h) */
    for (size_t i = 0; i < np && bi.device_type != kDLCPU; i++) fp8_products |= ts[i].numel > 0 && tc_compare_is_fp8(ts[i].dt);
    for (size_t i = 0; i < np; i++) {
      if (!ts[i].is_output) continue;
      if (o->perturb && strcmp(o->perturb, ts[i].name) == 0 && ts[i].numel > 0) /* testing aid */
        tc_dtype_store_f64(ts[i].dt, out[i], 0, tc_dtype_load_f64(ts[i].dt, out[i], 0) + 1.0);
      if (!tc_compare_buffers_unordered(ts[i].dt, ts[i].through, fp8_products, out[i], ts[i].reference, ts[i].ndim, ts[i].shape,
                                        ts[i].unordered, &r->cmp[i])) {
        cli_error("out of memory comparing '%s'", ts[i].name);
        r->cmp[i].ok = 0;
      }
      if (!r->cmp[i].ok) disagree = 1;
    }
  }

  const char *refdesc = strcmp(refname, "cpu") == 0 ? "the cpu backend" : "the reference interpreter (float64)";
  if (o->json) {
    printf("{\"kernel\": ");
    cli_json_string(tilec_kernel_name(cpu));
    printf(", \"reference\": \"%s\", \"seed\": %llu, \"ok\": %s, \"backends\": [", refname, o->seed,
           disagree || failed ? "false" : "true");
    for (size_t j = 0; j < nrows; j++) {
      vrow *r = &rows[j];
      printf("%s{\"backend\": ", j ? ", " : "");
      cli_json_string(r->backend);
      printf(", \"status\": \"%s\"", r->status == 0 ? "ran" : r->status == 1 ? "skipped" : "failed");
      if (r->status) {
        printf(", \"reason\": ");
        cli_json_string(r->reason);
        printf("}");
        continue;
      }
      printf(", \"outputs\": [");
      int first = 1;
      for (size_t i = 0; i < np; i++) {
        if (!ts[i].is_output) continue;
        tilec_compare *c = &r->cmp[i];
        printf("%s{\"name\": ", first ? "" : ", ");
        first = 0;
        cli_json_string(ts[i].name);
        printf(", \"max_abs_err\": ");
        cli_json_number(c->max_abs_err);
        printf(", \"max_rel_err\": ");
        cli_json_number(c->max_rel_err);
        printf(", \"cosine\": ");
        cli_json_number(c->cosine);
        printf(", \"argmax_match\": %s, \"ok\": %s, \"nan_inf_mismatch\": %lld, \"unordered_dims\": ", c->argmax_match ? "true" : "false",
               c->ok ? "true" : "false", (long long)c->nan_mismatch);
        cli_print_unordered(ts[i].unordered, 1);
        printf("}");
      }
      printf("]}");
    }
    printf("]}\n");
  } else {
    printf("kernel %s: every available backend against %s, seed %llu\n", tilec_kernel_name(cpu), refdesc, o->seed);
    printf("%-16s %-12s %10s %10s %13s %6s  %s\n", "backend", "output", "max_abs", "max_rel", "cosine", "argmax",
           "ok");
    for (size_t j = 0; j < nrows; j++) {
      vrow *r = &rows[j];
      if (r->status) continue;
      for (size_t i = 0; i < np; i++) {
        if (!ts[i].is_output) continue;
        tilec_compare *c = &r->cmp[i];
        printf("%-16s %-12s %10.3g %10.3g %13.9f %6s  %s", r->backend, ts[i].name, c->max_abs_err, c->max_rel_err,
               c->cosine, c->argmax_match ? "yes" : "no", c->ok ? "yes" : "NO");
        if (c->nan_mismatch) printf(" (%lld elements NaN or infinite on one side only)", (long long)c->nan_mismatch);
        if (tc_dtype_valid(ts[i].through)) {
          char nm[32];
          tc_dtype_name(ts[i].through, nm, sizeof nm);
          printf(" (rounded through %s)", nm);
        }
        if (ts[i].unordered) {
          printf(" (");
          cli_print_unordered(ts[i].unordered, 0);
          printf(")");
        }
        printf("\n");
      }
    }
    for (size_t j = 0; j < nrows; j++) {
      vrow *r = &rows[j];
      if (r->status == 2) printf("%-16s FAILED: %s\n", r->backend, r->reason);
    }
    for (size_t j = 0; j < nrows; j++) {
      vrow *r = &rows[j];
      if (r->status == 1) printf("%-16s skipped: %s\n", r->backend, r->reason);
    }
  }
  if (disagree) {
    cli_error("verification failed: a backend's results differ from %s beyond tolerance",
            refdesc);
    rc = CLI_EXIT_VERIFY;
  } else if (failed) {
    cli_error("a backend that is available here failed to compile or run the kernel");
    rc = CLI_EXIT_TARGET;
  }
  goto done;

nomem:
  cli_error("out of memory");
  rc = CLI_EXIT_TARGET;
  goto done;
report:
  rc = cli_report(&err);
done:
  for (size_t i = 0; ts && i < np; i++) {
    free(ts[i].initial);
    free(ts[i].reference);
    if (out) free(out[i]);
  }
  for (size_t j = 0; rows && j < nrows; j++) free(rows[j].cmp);
  free(rows);
  free(out);
  free(ts);
  tilec_kernel_destroy(cpu);
  tilec_program_destroy(prog);
  tilec_context_destroy(ctx);
  cli_watchdog_stop(watchdog);
  return rc;
}
