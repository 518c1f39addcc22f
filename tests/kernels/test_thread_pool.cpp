// The thread pool runs every item exactly once, over many back-to-back calls.
#include <atomic>
#include <catch2/catch.hpp>
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
