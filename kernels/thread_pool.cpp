// Worker threads spin briefly before sleeping, because decode issues many short parallel
// calls per token and a sleeping wake-up costs more than the work of a small matrix. The
// hand-off itself takes no lock while both sides are spinning: a job is published by bumping a
// generation counter and finished by counting down, and the mutex and condition variables are
// only touched when one side has gone to sleep.
#include "kernels/thread_pool.h"

#include "kernels/errors.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SNAPSTREAM_CPU_RELAX() _mm_pause()
#else
#define SNAPSTREAM_CPU_RELAX() ((void)0)
#endif

namespace snapstream::kernels {
namespace {
// About 40 µs: long enough to bridge the serial gaps between a decode step's matmuls,
// short enough not to starve other processes when the machine is oversubscribed.
constexpr int kSpinIterations = 2000;
}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int share = 1; share < threads; ++share) workers_.emplace_back([this, share] { worker_loop(share); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    generation_.fetch_add(1);
  }
  start_cv_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void ThreadPool::run_share(int share, int shares) {
  if (share >= shares) return;
  const int64_t begin = job_items_ * share / shares;
  const int64_t end = job_items_ * (share + 1) / shares;
  if (begin < end) (*job_)(begin, end);
}

void ThreadPool::parallel_for(int64_t items, const RangeFn& fn, int64_t cost_per_item) {
  if (items <= 0) return;
  if (busy_.exchange(true, std::memory_order_acquire))
    throw KernelArgumentError("ThreadPool::parallel_for: the pool is already running a job from another thread");
  struct Release {
    std::atomic<bool>& flag;
    ~Release() { flag.store(false, std::memory_order_release); }
  } release{busy_};
  const int64_t total_cost = items * std::max<int64_t>(1, cost_per_item);
  const int shares = static_cast<int>(std::min<int64_t>({size(), items, std::max<int64_t>(1, total_cost / kMinShareCost)}));
  if (shares == 1) {
    fn(0, items);
    return;
  }
  // Workers read these only after they see the new generation, and the previous job's readers
  // have all counted down before the caller got here.
  job_ = &fn;
  job_items_ = items;
  job_shares_ = shares;
  pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
  // Sequentially consistent against a worker's "sleeping, then check the generation": either
  // it sees this job, or this sees it asleep and wakes it.
  generation_.fetch_add(1);
  if (sleeping_workers_.load() > 0) {
    std::lock_guard lock(mutex_);
    start_cv_.notify_all();
  }
  run_share(0, shares);
  for (int spin = 0; spin < kSpinIterations; ++spin) {
    if (pending_.load(std::memory_order_acquire) == 0) return;
    SNAPSTREAM_CPU_RELAX();
  }
  std::unique_lock lock(mutex_);
  caller_sleeping_.store(true);
  done_cv_.wait(lock, [this] { return pending_.load() == 0; });
  caller_sleeping_.store(false);
}

void ThreadPool::worker_loop(int share) {
  uint64_t seen = 0;
  for (;;) {
    bool started = false;
    for (int spin = 0; spin < kSpinIterations; ++spin) {
      if (generation_.load(std::memory_order_acquire) != seen) {
        started = true;
        break;
      }
      SNAPSTREAM_CPU_RELAX();
    }
    if (!started) {
      std::unique_lock lock(mutex_);
      sleeping_workers_.fetch_add(1);
      start_cv_.wait(lock, [&] { return generation_.load() != seen; });
      sleeping_workers_.fetch_sub(1);
    }
    seen = generation_.load(std::memory_order_acquire);
    if (stopping_.load(std::memory_order_acquire)) return;
    run_share(share, job_shares_);
    if (pending_.fetch_sub(1) == 1 && caller_sleeping_.load()) {
      std::lock_guard lock(mutex_);
      done_cv_.notify_one();
    }
  }
}

}  // namespace snapstream::kernels
