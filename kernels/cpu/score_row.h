// The step between scoring keys and the softmax in decode attention: scale the live entries'
// scores, rule out the empty ones, and find the row's maximum, in one pass.
#pragma once

#include <cstdint>

#include "kernels/cpu/float_isa.h"

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN

// scores[i] = live[i] ? scores[i] * scale : -inf for i < n. Returns the largest of `start` and
// the new scores (a NaN score is passed over, as std::max(largest, score) would).
float scale_live_scores(float* scores, const uint8_t* live, int64_t n, float scale, float start);

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
