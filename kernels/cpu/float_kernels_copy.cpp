// One copy's table of float kernels, compiled once per instruction set beside the kernels it lists
// (SNAPSTREAM_FLOAT_ISA names the copy).
#include "kernels/cpu/activation_blocks.h"
#include "kernels/cpu/dot.h"
#include "kernels/cpu/exp_row.h"
#include "kernels/cpu/f16_rows.h"
#include "kernels/cpu/float_kernels.h"
#include "kernels/cpu/gemm_f32.h"
#include "kernels/cpu/head8.h"
#include "kernels/cpu/score_row.h"
#include "kernels/cpu/weighted_sum.h"

#ifndef SNAPSTREAM_FLOAT_ISA
#error "compiled only as a copy of the float kernels (kernels/CMakeLists.txt)"
#endif

namespace snapstream::kernels::cpu::SNAPSTREAM_FLOAT_ISA {

#define SNAPSTREAM_STRINGIFY_(name) #name
#define SNAPSTREAM_STRINGIFY(name) SNAPSTREAM_STRINGIFY_(name)

extern const FloatKernels kFloatKernels;
const FloatKernels kFloatKernels{
    SNAPSTREAM_STRINGIFY(SNAPSTREAM_FLOAT_ISA),
    dot_f32,
    dot_f16,
    dot_bf16,
    dot_16bit_tile,
    dot_row,
    dot_f32_tile,
    dot_f32_rows8,
    dot_f16_rows8,
    dot_q8_0,
    dot_q8_0_rows8,
    weighted_row_sums,
    weighted_row_sums,
    weighted_q8_0_row_sums,
    scale_live_scores,
    exp_shifted_row,
    exp_row,
#ifdef SNAPSTREAM_HEAD8_SCORES
    score_keys_head8,
    score_keys_head8,
#else
    nullptr,
    nullptr,
#endif
#ifdef SNAPSTREAM_HEAD8
    weighted_rows_head8,
    weighted_rows_head8,
#else
    nullptr,
    nullptr,
#endif
    widen_f16_row,
    narrow_f16_row,
    narrow_q8_0_blocks,
    widen_q8_0_blocks,
    quantize_q8_k_blocks,
    quantize_q8_0_blocks,
    gemm_f32,
    attention_scores_f32,
    attention_values_f32,
};

}  // namespace snapstream::kernels::cpu::SNAPSTREAM_FLOAT_ISA
