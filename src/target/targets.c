/* targets.c: the targets tilec lowers for (cpu, cuda, metal), target strings
 * ("cuda,arch=sm_90a") and the printing of target descriptions. */
#include <stdio.h>
#include <string.h>

#include "target/cpu/cpu.h"
#include "target/cuda/cuda.h"
#include "target/metal/metal.h"
#include "target/target.h"
#include "util/diag.h"

static const tc_target *const k_targets[] = {&tc_cpu_target, &tc_cuda_target, &tc_metal_target};
#define NTARGETS (sizeof k_targets / sizeof *k_targets)

bool tc_target_spec_parse(const char *text, tc_target_spec *out, tilec_error *err) {
  memset(out, 0, sizeof *out);
  if (!text || !*text) text = "auto";
  const char *comma = strchr(text, ',');
  size_t n = comma ? (size_t)(comma - text) : strlen(text);
  if (n == 0) {
    tc_error(err, TILEC_ERROR_USAGE, "target '%s' names no target before its options", text);
    return false;
  }
  if (n >= sizeof out->kind) {
    tc_error(err, TILEC_ERROR_USAGE, "unknown target '%.*s'", (int)n, text);
    return false;
  }
  memcpy(out->kind, text, n);
  for (const char *p = comma; p; p = strchr(p, ',')) {
    p++; /* past the comma */
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    if (!eq || eq == p) {
      tc_error(err, TILEC_ERROR_USAGE, "target '%s': option '%.*s' is not key=value", text, (int)len, p);
      return false;
    }
    size_t klen = (size_t)(eq - p), vlen = len - klen - 1;
    if (out->nopts == TC_TARGET_MAX_OPTIONS || klen >= sizeof out->opts[0].key ||
        vlen >= sizeof out->opts[0].value) {
      tc_error(err, TILEC_ERROR_USAGE, "target '%s': too many or too long options", text);
      return false;
    }
    if (vlen == 0) {
      tc_error(err, TILEC_ERROR_USAGE, "target '%s': option '%.*s' has an empty value", text, (int)klen, p);
      return false;
    }
    tc_target_option *o = &out->opts[out->nopts];
    memcpy(o->key, p, klen);
    memcpy(o->value, eq + 1, vlen);
    for (int i = 0; i < out->nopts; i++)
      if (strcmp(out->opts[i].key, o->key) == 0) {
        tc_error(err, TILEC_ERROR_USAGE, "target '%s': option '%s' is given twice", text, o->key);
        return false;
      }
    out->nopts++;
  }
  return true;
}

const tc_target *tc_target_find(const char *kind, tilec_error *err) {
  if (!kind || !*kind || strcmp(kind, "auto") == 0) kind = "cpu";
  for (size_t i = 0; i < NTARGETS; i++)
    if (strcmp(k_targets[i]->name, kind) == 0) return k_targets[i];
  char names[128] = "";
  for (size_t i = 0; i < NTARGETS; i++)
    snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", i ? ", " : "", k_targets[i]->name);
  tc_error(err, TILEC_ERROR_USAGE, "unknown target '%s' (targets: %s)", kind, names);
  return NULL;
}

bool tc_target_describe(const tc_target *t, const tc_target_spec *spec, tc_target_desc *out,
                        tilec_error *err) {
  for (int i = 0; i < spec->nopts; i++) {
    bool known = false;
    for (int j = 0; j < t->noption_keys; j++) known |= strcmp(spec->opts[i].key, t->option_keys[j]) == 0;
    if (known) continue;
    char keys[128] = "";
    for (int j = 0; j < t->noption_keys; j++)
      snprintf(keys + strlen(keys), sizeof keys - strlen(keys), "%s%s", j ? ", " : "", t->option_keys[j]);
    if (t->noption_keys)
      tc_error(err, TILEC_ERROR_USAGE, "unknown option '%s' for target '%s' (valid options: %s)",
               spec->opts[i].key, t->name, keys);
    else
      tc_error(err, TILEC_ERROR_USAGE, "unknown option '%s' for target '%s' (%s takes no options)",
               spec->opts[i].key, t->name, t->name);
    return false;
  }
  memset(out, 0, sizeof *out);
  return t->describe(spec, out, err);
}

void tc_target_desc_print(tc_strbuf *sb, const tc_target_desc *d) {
  tc_sb_printf(sb, "# target %s: arch %s, warp %d, max threads per block %d, shared memory per block ",
               d->target, d->arch, d->warp_size, d->max_threads_per_block);
  if (d->smem_per_block) tc_sb_printf(sb, "%lld bytes\n", (long long)d->smem_per_block);
  else tc_sb_puts(sb, "unlimited\n");
  if (!d->nmma) {
    tc_sb_puts(sb, "# matrix instructions: none\n");
    return;
  }
  tc_sb_puts(sb, "# matrix instructions:");
  for (int i = 0; i < d->nmma; i++) {
    const tc_mma_shape *m = &d->mma[i];
    tc_sb_printf(sb, "%s %s m%dn%dk%d %s->%s", i ? "," : "", m->instr, m->m, m->n, m->k, m->ab, m->acc);
  }
  tc_sb_putc(sb, '\n');
}
