// A STREAM-like probe of the machine's memory bandwidth, the roofline of decode.
#pragma once

#include <cstdint>

#include "kernels/thread_pool.h"

namespace snapstream::bench {

struct BandwidthResult {
  double read_bytes_per_s = 0.0;   // sum over a buffer far larger than the caches (decode's pattern)
  double copy_bytes_per_s = 0.0;   // a[i] = b[i], counting bytes read plus written
  int64_t buffer_bytes = 0;
  int threads = 0;
};

// Best of `repeats` passes over a buffer of `buffer_bytes`, split over the pool's threads.
BandwidthResult measure_bandwidth(kernels::ThreadPool& pool, int64_t buffer_bytes, int repeats);

}  // namespace snapstream::bench
