// The thread pool runs every item exactly once, over many back-to-back calls, largest chunks first.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <catch2/catch.hpp>
#include <utility>
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

TEST_CASE("parallel_for hands out its largest chunks first and its smallest last", "[thread_pool]") {
  // The chunks claimed last decide how long the threads wait for each other at the end.
  ThreadPool pool(2);
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> ranges;
  pool.parallel_for(1000, [&](int64_t begin, int64_t end) {
    std::lock_guard lock(mutex);
    ranges.emplace_back(begin, end);
  });
  std::sort(ranges.begin(), ranges.end());
  REQUIRE(ranges.size() >= 4);
  CHECK(ranges.front().first == 0);
  CHECK(ranges.back().second == 1000);
  for (size_t k = 1; k < ranges.size(); ++k) {
    CHECK(ranges[k].first == ranges[k - 1].second);
    CHECK(ranges[k].second - ranges[k].first <= ranges[k - 1].second - ranges[k - 1].first);
  }
  CHECK(ranges.back().second - ranges.back().first < (ranges.front().second - ranges.front().first) / 4);
}

TEST_CASE("parallel_for runs each item once when threads arrive late or sleep between jobs", "[thread_pool]") {
  // More threads than this machine has cores, and pauses longer than a worker spins: workers
  // are descheduled or asleep when jobs start, so chunks go to whoever comes first.
  ThreadPool pool(4);
  constexpr int64_t kMostItems = 97;
  std::vector<std::atomic<int>> hits(kMostItems);
  std::vector<int> expected(kMostItems, 0);
  for (int call = 0; call < 400; ++call) {
    const int64_t items = 1 + call % kMostItems;
    pool.parallel_for(items, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
    }, ThreadPool::kMinShareCost);
    for (int64_t i = 0; i < items; ++i) ++expected[static_cast<size_t>(i)];
    if (call % 50 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  for (int64_t i = 0; i < kMostItems; ++i) REQUIRE(hits[static_cast<size_t>(i)].load() == expected[static_cast<size_t>(i)]);
}

TEST_CASE("parallel_for inside bursts runs each item once, and the pool sleeps again after them", "[thread_pool]") {
  ThreadPool pool(3);
  constexpr int64_t kItems = 64;
  std::vector<std::atomic<int>> hits(kItems);
  auto count = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
  };
  int calls = 0;
  for (int round = 0; round < 20; ++round) {
    const ThreadPool::Burst outer(pool);
    pool.parallel_for(kItems, count, ThreadPool::kMinShareCost);
    ++calls;
    {
      const ThreadPool::Burst inner(pool);
      pool.parallel_for(kItems, count, ThreadPool::kMinShareCost);
      ++calls;
    }
    // A serial gap longer than a worker's spin outside a burst.
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    pool.parallel_for(kItems, count, ThreadPool::kMinShareCost);
    ++calls;
  }
  // Outside any burst the workers fall asleep; a job still wakes them.
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  pool.parallel_for(kItems, count, ThreadPool::kMinShareCost);
  ++calls;
  for (int64_t i = 0; i < kItems; ++i) REQUIRE(hits[static_cast<size_t>(i)].load() == calls);
}
