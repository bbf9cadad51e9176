/* metal_rt.h: the `metal` backend's steps after code generation (backend_device.c), for its
 * descriptor in backends.c, and the reading of the code generator's meta lines. */
#ifndef TILEC_METAL_RT_H
#define TILEC_METAL_RT_H

#include "target/metal/objc.h"
#include "target/target.h"

/* What the code generator says about a kernel (tc_metal_emit's meta: entry=, block=, smem=,
 * arch=). */
typedef struct tc_metal_meta {
  char entry[256];
  uint32_t block[3];
  size_t smem; /* bytes of threadgroup memory the kernel declares */
  char arch[32];
  int msl;     /* x100 */
  bool metal4;
} tc_metal_meta;
tilec_status tc_metal_meta_parse(const char *meta, tc_metal_meta *out, tilec_error *err);
/* The MTLLanguageVersion the source needs: 4.0 for metal4 kernels, else its msl=. */
tc_nsuint tc_metal_needed_language(const tc_metal_meta *m);

bool tc_metal_device_available(const tc_backend_env *env, char *why, size_t cap);
tilec_status tc_metal_device_load(const tc_backend_env *env, const tc_kernel_ir *k, const tc_generated *src,
                                  const void *artifact, size_t artifact_size, tc_loaded **out, tilec_error *err);
tilec_status tc_metal_device_launch(const tc_backend_env *env, tc_loaded *m, const tc_launch_args *a, tilec_error *err);
void tc_metal_device_unload(tc_loaded *m);
tilec_status tc_metal_device_synchronize(const tc_backend_env *env, void *stream, tilec_error *err);
int tc_metal_device_details(const tc_backend_env *env, tc_backend_detail *out);


/* ---- the metallib backend (metallib.c): xcrun's offline compiler, the disk cache ----
 * Artifact: "tilec-metallib 1\n" META-TEXT "\0" METALLIB-BYTES, so a cache hit needs neither the
 * generator nor the compiler. */
tilec_status tc_metal_metallib_build(const tc_backend_env *env, const tc_generated *src, void **artifact,
                                     size_t *artifact_size, tilec_error *err);
char *tc_metal_metallib_toolchain_id(const tc_backend_env *env, tilec_error *err);
const void *tc_metal_metallib_payload(const void *artifact, size_t size, size_t *payload_size);
bool tc_metal_metallib_unpack(const void *artifact, size_t size, const char **meta, const void **lib, size_t *lib_size);
tilec_status tc_metal_metallib_load(const tc_backend_env *env, const tc_kernel_ir *k, const tc_generated *src,
                                    const void *artifact, size_t artifact_size, tc_loaded **out, tilec_error *err);

#endif
