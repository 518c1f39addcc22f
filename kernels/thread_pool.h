// A fixed set of worker threads that split a range of independent work items between them.
// The calling thread takes a share too, so a pool of N threads runs N shares at once.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace snapstream::kernels {

class ThreadPool {
 public:
  // Runs a contiguous range [begin, end) of work items.
  using RangeFn = std::function<void(int64_t begin, int64_t end)>;

  // threads <= 0 means one per hardware thread.
  explicit ThreadPool(int threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // Splits [0, items) into at most size() contiguous shares and waits for all of them.
  // A call from a second thread while one runs throws KernelArgumentError.
  // `cost_per_item` (roughly multiply-adds) keeps small jobs on the calling thread, where a
  // hand-off would cost more than the work. Calls must not nest, and only one thread may call at a time.
  void parallel_for(int64_t items, const RangeFn& fn, int64_t cost_per_item = kMinShareCost);

  // Work below which a share is not worth handing to another thread.
  static constexpr int64_t kMinShareCost = 1 << 15;

 private:
  void worker_loop(int share);
  void run_share(int share, int shares);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<bool> busy_{false};
  std::atomic<bool> stopping_{false};
  const RangeFn* job_ = nullptr;
  int64_t job_items_ = 0;
  int job_shares_ = 0;
};

}  // namespace snapstream::kernels
