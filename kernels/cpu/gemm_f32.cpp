// Prefill's f32 matrix products on Eigen's blocked kernels.
#include "kernels/cpu/gemm_f32.h"

// Each copy of the float kernels gets Eigen in a namespace of its own (eigen_x86_64, eigen_avx2,
// ...): Eigen's templates and inline functions would otherwise have the same names in every copy,
// and the linker would keep one copy's body, built for one instruction set, for all of them.
#define SNAPSTREAM_PASTE_(a, b) a##b
#define SNAPSTREAM_PASTE(a, b) SNAPSTREAM_PASTE_(a, b)
#define Eigen SNAPSTREAM_PASTE(eigen_, SNAPSTREAM_FLOAT_ISA)
#include <Eigen/Core>

namespace snapstream::kernels::cpu {
SNAPSTREAM_FLOAT_ISA_BEGIN
namespace {
using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using Strided = Eigen::OuterStride<>;
}  // namespace

void gemm_f32(const float* x, int64_t m, const float* w, int64_t rows, int64_t cols, float* y, int64_t ldy) {
  Eigen::Map<const RowMajor> xs(x, m, cols);
  Eigen::Map<const RowMajor> ws(w, rows, cols);
  Eigen::Map<RowMajor, 0, Strided> ys(y, m, rows, Strided(ldy));
  ys.noalias() = xs * ws.transpose();
}

void attention_scores_f32(const float* q, int64_t q_stride, int64_t rows, const float* keys, int64_t kv_stride,
                          int64_t seen, int64_t head_dim, float scale, float* scores) {
  Eigen::Map<const RowMajor, 0, Strided> qs(q, rows, head_dim, Strided(q_stride));
  Eigen::Map<const RowMajor, 0, Strided> ks(keys, seen, head_dim, Strided(kv_stride));
  Eigen::Map<RowMajor> ss(scores, rows, seen);
  ss.noalias() = (qs * ks.transpose()) * scale;
}

void attention_values_f32(const float* scores, int64_t rows, int64_t seen, const float* values, int64_t kv_stride,
                          int64_t head_dim, float* out, int64_t out_stride) {
  Eigen::Map<const RowMajor> ss(scores, rows, seen);
  Eigen::Map<const RowMajor, 0, Strided> vs(values, seen, head_dim, Strided(kv_stride));
  Eigen::Map<RowMajor, 0, Strided> os(out, rows, head_dim, Strided(out_stride));
  os.noalias() = ss * vs;
}

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
