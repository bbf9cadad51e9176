/* metal.h: the metal target (target.c) and its execution backends (macOS only). Their available() probes for
 * a Metal device (and, for metallib, the offline compiler); the code generator is a later
 * issue, so generate, build, load and launch are NULL. */
#ifndef TILEC_METAL_H
#define TILEC_METAL_H
#include "target/target.h"

extern const tc_backend tc_metal_metal_backend;    /* compile from source in process: TC_BACKEND_IN_MEMORY */
extern const tc_backend tc_metal_metallib_backend; /* offline metal compiler -> .metallib */
extern const tc_target tc_metal_target;            /* description and passes (target.c) */

#endif
