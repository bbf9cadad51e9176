/* generated.c: what every backend's generate() produces, freed in one place. */
#include <stdlib.h>

#include "target/target.h"

void tc_generated_free(tc_generated *g) {
  if (!g) return;
  free(g->kernel_source);
  free(g->full_source);
  free(g->meta);
  g->kernel_source = g->full_source = g->meta = NULL;
}
