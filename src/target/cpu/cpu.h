/* cpu.h: the cpu target's execution backend "cc" (system C compiler -> shared object ->
 * dlopen). See docs/cpu-backend.md. */
#ifndef TILEC_TARGET_CPU_H
#define TILEC_TARGET_CPU_H

#include "target/target.h"

extern const tc_backend tc_cpu_cc_backend;

/* Version of the entry points every generated translation unit exports (see codegen.c). */
#define TC_CPU_ABI_VERSION 1

#endif
