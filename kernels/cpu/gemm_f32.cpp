// Prefill's f32 GEMM on Eigen's blocked kernels.
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

void gemm_f32(const float* x, int64_t m, const float* w, int64_t rows, int64_t cols, float* y, int64_t ldy) {
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const RowMajor> xs(x, m, cols);
  Eigen::Map<const RowMajor> ws(w, rows, cols);
  Eigen::Map<RowMajor, 0, Eigen::OuterStride<>> ys(y, m, rows, Eigen::OuterStride<>(ldy));
  ys.noalias() = xs * ws.transpose();
}

SNAPSTREAM_FLOAT_ISA_END
}  // namespace snapstream::kernels::cpu
