/* codegen.h: the metal target's code generator (SIMT IR -> MSL). */
#ifndef TILEC_METAL_CODEGEN_H
#define TILEC_METAL_CODEGEN_H

#include "gpu/gpu.h"
#include "target/target.h"

/* The MSL prelude generated kernels include (src/target/metal/prelude.metal). */
const char *tc_metal_prelude(void);

#endif
