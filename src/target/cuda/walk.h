/* walk.h: the order in which a persistent kernel's blocks walk its tiles (walk.c). */
#ifndef TILEC_CUDA_WALK_H
#define TILEC_CUDA_WALK_H

#include "ir/ir.h"

/* The LET of v among the statements of s (through sequences, not into loops or ifs), or NULL. */
const tc_stmt *tc_cuda_find_let(const tc_stmt *s, const tc_var *v);

/* The bytes that the producer part of the warp-specialized loop `loop` of kernel k loads per
 * iteration for one grid-x index (*per_x: tiles that share it, those of one grid column, read
 * them together) and for one grid-y index (*per_y); loads that depend on both or neither count
 * in neither. Both 0 when the loop loads nothing by TMA. */
void tc_cuda_wave_bytes(const tc_kernel_ir *k, const tc_stmt *loop, int64_t *per_x, int64_t *per_y);

/* Whether the consumers of the persistent kernel k, whose warp-specialized loop is `loop` (a
 * pure sum: tc_cuda_streamk_plan), may start a tile's loop and its epilogue without meeting:
 * outside the loop, whose stages the mbarriers order, they share no memory (they touch no
 * shared buffer but warp-private ones, the epilogue's staging tiles, and no global buffer they
 * both read and write), so the consumer barriers the tile holds order nothing. */
bool tc_cuda_consumers_run_free(const tc_kernel_ir *k, const tc_stmt *loop);

#endif
