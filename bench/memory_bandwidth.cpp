// The read pass uses the same SIMD dot product as decode, against a small vector that stays in
// L1, so it measures what the matmul kernel could reach at best.
#include "bench/memory_bandwidth.h"

#include <algorithm>
#include <cstring>

#include "bench/best_seconds.h"
#include "kernels/cpu/dot.h"

namespace snapstream::bench {
namespace {
constexpr int64_t kChunkFloats = 4096;
const std::vector<float> kOnes(kChunkFloats, 1.0f);
}  // namespace

BandwidthProbe::BandwidthProbe(kernels::ThreadPool& pool, int64_t buffer_bytes) : pool_(pool) {
  const int64_t floats = std::max<int64_t>(kChunkFloats, buffer_bytes / 4 / kChunkFloats * kChunkFloats);
  chunks_ = floats / kChunkFloats;
  source_.resize(static_cast<size_t>(floats));
  target_.resize(static_cast<size_t>(floats));
  sums_.assign(static_cast<size_t>(chunks_), 0.0);
  pool_.parallel_for(chunks_, [&](int64_t begin, int64_t end) {  // first touch on the thread that will read it
    for (int64_t c = begin; c < end; ++c) {
      std::fill_n(source_.data() + c * kChunkFloats, kChunkFloats, 1.0f);
      std::fill_n(target_.data() + c * kChunkFloats, kChunkFloats, 0.0f);
    }
  });
}

BandwidthResult BandwidthProbe::measure(int passes) {
  BandwidthResult result;
  result.buffer_bytes = static_cast<int64_t>(source_.size()) * 4;
  result.threads = pool_.size();
  const double read_s = best_seconds(passes, [&] {
    pool_.parallel_for(chunks_, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c)
        sums_[static_cast<size_t>(c)] += kernels::cpu::dot_f32(source_.data() + c * kChunkFloats, kOnes.data(), kChunkFloats);
    });
  });
  const double copy_s = best_seconds(passes, [&] {
    pool_.parallel_for(chunks_, [&](int64_t begin, int64_t end) {
      std::memcpy(target_.data() + begin * kChunkFloats, source_.data() + begin * kChunkFloats,
                  static_cast<size_t>((end - begin) * kChunkFloats) * 4);
    });
  });
  result.read_bytes_per_s = static_cast<double>(result.buffer_bytes) / read_s;
  result.copy_bytes_per_s = 2.0 * static_cast<double>(result.buffer_bytes) / copy_s;
  return result;
}

}  // namespace snapstream::bench
