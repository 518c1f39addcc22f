// The thread pool runs every item exactly once, over many back-to-back calls, in and out of bursts.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "kernels/thread_pool.h"

using snapstream::kernels::ThreadPool;

TEST_CASE("parallel_for covers each item once", "[thread_pool]") {
  const int threads = GENERATE(1, 2, 3);
  ThreadPool pool(threads);
  CHECK(pool.size() == threads);
  for (int64_t items : {0, 1, 2, 5, 1000}) {
    std::vector<std::atomic<int>> hits(static_cast<size_t>(items));
    for (int call = 0; call < 200; ++call)
      pool.parallel_for(items, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
    for (auto& h : hits) REQUIRE(h.load() == 200);
  }
}

TEST_CASE("a burst keeps workers spinning between calls and lets them sleep after it", "[thread_pool]") {
  ThreadPool pool(2);
  std::atomic<int64_t> done{0};
  auto count = [&](int64_t begin, int64_t end) { done.fetch_add(end - begin); };
  {
    const ThreadPool::Burst outer(pool);
    const ThreadPool::Burst inner(pool);  // bursts nest
    for (int call = 0; call < 50; ++call) {
      pool.parallel_for(64, count, ThreadPool::kMinShareCost);
      // A serial stretch longer than the workers' usual spin.
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  CHECK(done.load() == 50 * 64);
  // After the burst the workers fall back to sleeping, and a later call still wakes them.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  pool.parallel_for(64, count, ThreadPool::kMinShareCost);
  CHECK(done.load() == 51 * 64);
}
