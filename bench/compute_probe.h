// The arithmetic roofline of batched decode: the model's own matmul kernel on a weight matrix
// small enough to stay in cache, so the rate is bound by the cores' multiply-adds, not memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/dtype.h"
#include "kernels/thread_pool.h"
#include "kernels/weight_view.h"

namespace snapstream::bench {

struct ComputeResult {
  double multiply_adds_per_s = 0.0;
  int threads = 0;
  int64_t activation_rows = 0;
  int64_t weight_bytes = 0;
  bool regrouped = false;  // the matrix was read as row groups
};

class ComputeProbe {
 public:
  // A matrix stored as `dtype`, rows of `cols` values (a row length the type allows) and about
  // kWeightBytesPerThread for each of `threads` threads, against `activation_rows` rows: a decode
  // step's shape at that batch. With `row_groups`, the matrix is regrouped where the engine's
  // would be (kernels/row_groups.h), so the rate is that of the kernel decode runs. Throws
  // kernels::KernelArgumentError for a shape the type cannot store.
  ComputeProbe(kernels::DType dtype, int64_t cols, int64_t activation_rows, bool row_groups, int threads);
  // view_ points into the probe's own buffers: a copy would read the original's.
  ComputeProbe(const ComputeProbe&) = delete;
  ComputeProbe& operator=(const ComputeProbe&) = delete;
  ComputeProbe(ComputeProbe&&) = default;
  ComputeProbe& operator=(ComputeProbe&&) = default;
  // Best of `passes` passes on the pool's threads, each of enough products to last a few
  // tens of milliseconds.
  ComputeResult measure(kernels::ThreadPool& pool, int passes);

  // A thread's share stays in its core's L2 (512 KiB or more on the x86 cores this targets). The
  // matrix grows with the threads so that each call is long enough to split: one 256 KiB matrix
  // on two threads took about as long per call as on one, the hand-offs costing as much as the
  // work, where a decode step's smallest matrix (llama-110m's 768x768) holds more than this per thread.
  static constexpr int64_t kWeightBytesPerThread = 256 << 10;

 private:
  kernels::DType dtype_;
  int64_t rows_ = 0, cols_ = 0, activation_rows_ = 0;
  std::vector<std::byte> weights_, grouped_;
  kernels::WeightView view_;
  std::vector<float> x_, y_;
};

}  // namespace snapstream::bench
