// Causal attention in blocks of queries: for one head, a block's scores against every key it
// may see come from one GEMM, are masked and softmaxed row by row, and a second GEMM applies
// them to the values. Blocks are handed out early and late in turn, so the threads' shares of
// this triangular workload come out even.
#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/gemm_f32.h"
#include "kernels/errors.h"
#include "kernels/softmax.h"

namespace snapstream::kernels {
namespace {
constexpr int64_t kQueryBlock = 64;
}  // namespace

void causal_attention(ThreadPool& pool, const float* q, int64_t m, int64_t first_position, const float* keys,
                      const float* values, const AttentionShape& shape, float* out) {
  require(q && keys && values && out, "causal_attention", "null buffer");
  require(m > 0 && first_position >= 0, "causal_attention", "empty query block or negative position");
  shape.check("causal_attention");
  const int64_t hd = shape.head_dim;
  const int64_t blocks = (m + kQueryBlock - 1) / kQueryBlock;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));

  pool.parallel_for(blocks * shape.heads, [&](int64_t begin, int64_t end) {
    std::vector<float> scores;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t turn = item / shape.heads, h = item % shape.heads;
      const int64_t block = turn % 2 == 0 ? turn / 2 : blocks - 1 - turn / 2;
      const int64_t i0 = block * kQueryBlock, rows = std::min(kQueryBlock, m - i0);
      const int64_t seen = first_position + i0 + rows;  // keys the block's last query may see
      const int64_t kv_offset = (h / shape.group()) * hd;
      scores.resize(static_cast<size_t>(rows * seen));
      cpu::attention_scores_f32(q + i0 * shape.q_width() + h * hd, shape.q_width(), rows, keys + kv_offset,
                                shape.kv_width(), seen, hd, scale, scores.data());
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t visible = first_position + i0 + r + 1;
        float* row = scores.data() + r * seen;
        softmax(row, visible);
        std::fill(row + visible, row + seen, 0.0f);
      }
      cpu::attention_values_f32(scores.data(), rows, seen, values + kv_offset, shape.kv_width(), hd,
                                out + i0 * shape.q_width() + h * hd, shape.q_width());
    }
  }, 2 * kQueryBlock * (first_position + m) * hd);
}

}  // namespace snapstream::kernels
