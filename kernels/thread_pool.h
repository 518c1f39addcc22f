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

  // Splits [0, items) into contiguous chunks (a few per thread that takes part), runs each
  // once on whichever thread claims it first, and waits for all of them.
  // A call from a second thread while one runs throws KernelArgumentError.
  // `cost_per_item` (roughly multiply-adds) keeps small jobs on the calling thread, where a
  // hand-off would cost more than the work. Calls must not nest, and only one thread may call at a time.
  void parallel_for(int64_t items, const RangeFn& fn, int64_t cost_per_item = kMinShareCost);

  // While one lives, idle workers keep spinning between jobs instead of going to sleep: a graph
  // run issues its jobs back to back with short serial ops between them, and a worker woken
  // from sleep for each would cost more than those ops. Scopes may nest.
  class Burst {
   public:
    explicit Burst(ThreadPool& pool) : pool_(pool) { pool_.bursts_.fetch_add(1, std::memory_order_relaxed); }
    ~Burst() { pool_.bursts_.fetch_sub(1, std::memory_order_relaxed); }
    Burst(const Burst&) = delete;
    Burst& operator=(const Burst&) = delete;

   private:
    ThreadPool& pool_;
  };

  // Work below which a share is not worth handing to another thread: on a loaded machine (a
  // server beside its network threads) smaller hand-offs cost more than they save. Inside a
  // Burst, where the workers are already spinning, a much smaller share is split (thread_pool.cpp).
  static constexpr int64_t kMinShareCost = 1 << 17;

 private:
  void worker_loop();
  // Claims and runs chunks of `job` until none is left (or another job has begun).
  void run_chunks(uint64_t job);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_;
  std::condition_variable done_cv_;
  std::atomic<uint64_t> generation_{0};
  // The job's number, its chunk count and its next unclaimed chunk (thread_pool.cpp).
  std::atomic<uint64_t> claims_{0};
  std::atomic<int64_t> done_chunks_{0};
  std::atomic<int> sleeping_workers_{0};
  std::atomic<bool> caller_sleeping_{false};
  std::atomic<int> bursts_{0};
  std::atomic<bool> busy_{false};
  std::atomic<bool> stopping_{false};
  const RangeFn* job_ = nullptr;
  int64_t job_items_ = 0;
};

}  // namespace snapstream::kernels
