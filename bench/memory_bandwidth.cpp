// The read pass uses the same SIMD dot product as decode, against a small vector that stays in
// L1, so it measures what the matmul kernel could reach at best.
#include "bench/memory_bandwidth.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "kernels/cpu/dot.h"

namespace snapstream::bench {
namespace {
constexpr int64_t kChunkFloats = 4096;

// STREAM's convention: the best of several passes, the bandwidth the machine can deliver.
template <typename Fn>
double best_seconds(int repeats, Fn&& fn) {
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return *std::min_element(times.begin(), times.end());
}
}  // namespace

BandwidthResult measure_bandwidth(kernels::ThreadPool& pool, int64_t buffer_bytes, int repeats) {
  const int64_t floats = std::max<int64_t>(kChunkFloats, buffer_bytes / 4 / kChunkFloats * kChunkFloats);
  const int64_t chunks = floats / kChunkFloats;
  std::vector<float> source(static_cast<size_t>(floats)), target(static_cast<size_t>(floats));
  pool.parallel_for(chunks, [&](int64_t begin, int64_t end) {  // first touch on the thread that will read it
    for (int64_t c = begin; c < end; ++c) {
      std::fill_n(source.data() + c * kChunkFloats, kChunkFloats, 1.0f);
      std::fill_n(target.data() + c * kChunkFloats, kChunkFloats, 0.0f);
    }
  });
  const std::vector<float> ones(kChunkFloats, 1.0f);
  // One sum per chunk, written by whichever thread ran the chunk: it keeps the reads from
  // being optimised away, and no two threads ever write the same one.
  std::vector<double> sums(static_cast<size_t>(chunks), 0.0);

  BandwidthResult result;
  result.buffer_bytes = floats * 4;
  result.threads = pool.size();
  const double read_s = best_seconds(repeats, [&] {
    pool.parallel_for(chunks, [&](int64_t begin, int64_t end) {
      for (int64_t c = begin; c < end; ++c)
        sums[static_cast<size_t>(c)] += kernels::cpu::dot_f32(source.data() + c * kChunkFloats, ones.data(), kChunkFloats);
    });
  });
  const double copy_s = best_seconds(repeats, [&] {
    pool.parallel_for(chunks, [&](int64_t begin, int64_t end) {
      std::memcpy(target.data() + begin * kChunkFloats, source.data() + begin * kChunkFloats,
                  static_cast<size_t>((end - begin) * kChunkFloats) * 4);
    });
  });
  result.read_bytes_per_s = static_cast<double>(result.buffer_bytes) / read_s;
  result.copy_bytes_per_s = 2.0 * static_cast<double>(result.buffer_bytes) / copy_s;
  return result;
}

}  // namespace snapstream::bench
