/* conflict.c: access sets of block-visible memory and the hazards between them (contract in
 * analysis.h). */
#include <string.h>

#include "analysis/analysis.h"

void tc_conflict_init(tc_arena *a, tc_conflict_set *cs, int nids) {
  cs->nids = nids;
  cs->r = TC_NEW_ARRAY(a, bool, (size_t)nids + 1);
  cs->w = TC_NEW_ARRAY(a, bool, (size_t)nids + 1);
  cs->shared = TC_NEW_ARRAY(a, bool, (size_t)nids + 1);
}

void tc_conflict_clear(tc_conflict_set *cs) {
  memset(cs->r, 0, (size_t)cs->nids);
  memset(cs->w, 0, (size_t)cs->nids);
}

static void add_buf(void *c, const tc_buffer *b, bool write) {
  tc_conflict_set *cs = c;
  b = tc_buffer_storage(b); /* a view conflicts with the storage it names */
  if (!tc_buffer_is_block_visible(b) || b->id < 0 || b->id >= cs->nids) return;
  if (write) cs->w[b->id] = true;
  else cs->r[b->id] = true;
  if (b->scope == TC_SCOPE_SHARED) cs->shared[b->id] = true;
}

void tc_conflict_add_stmt(tc_conflict_set *cs, const tc_stmt *s) {
  tc_access_fns f = {NULL, add_buf, cs};
  tc_stmt_accesses(&f, s, true);
}

void tc_conflict_merge(tc_conflict_set *into, const tc_conflict_set *from) {
  for (int i = 0; i < into->nids && i < from->nids; i++) {
    into->r[i] |= from->r[i];
    into->w[i] |= from->w[i];
    into->shared[i] |= from->shared[i];
  }
}

bool tc_conflict_between(const tc_conflict_set *earlier, const tc_conflict_set *later) {
  for (int i = 0; i < earlier->nids && i < later->nids; i++)
    if ((later->w[i] && (earlier->r[i] || earlier->w[i])) || (later->r[i] && earlier->w[i])) return true;
  return false;
}

bool tc_conflict_shared_read_write(const tc_conflict_set *cs) {
  for (int i = 0; i < cs->nids; i++)
    if (cs->r[i] && cs->w[i] && cs->shared[i]) return true;
  return false;
}
