/* cpu.h: the cpu target (target.c) and its execution backend "cc" (system C compiler -> shared object ->
 * dlopen). See docs/cpu-backend.md. */
#ifndef TILEC_TARGET_CPU_H
#define TILEC_TARGET_CPU_H

#include "target/target.h"

extern const tc_backend tc_cpu_cc_backend;
extern const tc_target tc_cpu_target; /* description and passes (target.c) */

/* Version of the entry points every generated translation unit exports (see module.c). */
#define TC_CPU_ABI_VERSION 1

#endif
