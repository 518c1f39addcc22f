// A STREAM-like probe of the machine's memory bandwidth, the roofline of decode.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/thread_pool.h"

namespace snapstream::bench {

struct BandwidthResult {
  double read_bytes_per_s = 0.0;   // sum over a buffer far larger than the caches (decode's pattern)
  double copy_bytes_per_s = 0.0;   // a[i] = b[i], counting bytes read plus written
  int64_t buffer_bytes = 0;
  int threads = 0;
};

// Holds its buffers, so it can be measured again and again beside the work it is the roofline
// of: on a shared machine the bandwidth moves from minute to minute, and a share is only
// meaningful against a probe taken at the same time.
class BandwidthProbe {
 public:
  // Allocates two buffers of about `buffer_bytes` each, first touched on the pool's threads.
  BandwidthProbe(kernels::ThreadPool& pool, int64_t buffer_bytes);
  // Best of `passes` passes over the buffer, split over the pool's threads.
  BandwidthResult measure(int passes);

 private:
  kernels::ThreadPool& pool_;
  int64_t chunks_ = 0;
  std::vector<float> source_, target_;
  // One sum per chunk, written by whichever thread ran the chunk: it keeps the reads from being
  // optimised away, and no two threads ever write the same one.
  std::vector<double> sums_;
};

}  // namespace snapstream::bench
