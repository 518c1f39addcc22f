// Worker threads spin briefly before sleeping, because decode issues many short parallel
// calls per token and a sleeping wake-up costs more than the work of a small matrix; during a
// Burst (a whole graph run) they do not sleep between jobs at all. A job is cut into a few
// chunks per thread, largest first, that every thread, the caller included, claims from one
// counter: a worker that is slow to arrive (descheduled on a busy machine, or asleep) leaves its
// chunks to the others instead of holding the whole job up. The hand-off takes no lock while
// both sides are spinning; the mutex and condition variables are only touched when one side
// has gone to sleep.
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
// About 50 µs: long enough to bridge the serial gaps between a decode step's matmuls, and the
// gap between one step of a small model and the next (sampling, the next step's set-up), short
// enough to leave the cores to the server's network threads (and, on a shared machine, other
// processes) when steps stop. A worker that went to sleep costs the caller the wake-up call,
// and a job in few chunks (a step's slices of rows, graph/executor.cpp) the worker's wake-up
// time as well: stories260K at 16 sequences, two slices, ran a median of 1.19 times as fast
// with the workers spinning 50 µs rather than 10 (nine alternating runs).
constexpr int kSpinIterations = 2500;
// Inside a burst the caller waits up to about 200 µs for the last chunks: a worker that has
// them is running and done soon, and a sleeping caller would need a wake-up call.
constexpr int kBurstCallerSpins = 10000;
// Inside a burst the workers are spinning, so a hand-off costs about one cache-line transfer
// and shares this small (a few microseconds of work) are still worth splitting.
constexpr int64_t kBurstMinShareCost = 1 << 13;
// Chunks per thread that may take part: enough for the others to absorb a late thread's
// share, few enough that each chunk is still a long run of rows.
constexpr int64_t kChunksPerShare = 4;

// The claim counter: the job's number, its chunk count and its next unclaimed chunk, so a
// thread decides what to run from one atomic word.
constexpr uint64_t kFieldBits = 16;
constexpr uint64_t kFieldMask = (uint64_t{1} << kFieldBits) - 1;
constexpr uint64_t kJobShift = 2 * kFieldBits;
constexpr uint64_t kJobMask = (uint64_t{1} << (64 - kJobShift)) - 1;  // job numbers wrap around
constexpr int64_t kMaxChunks = static_cast<int64_t>(kFieldMask);

// Where chunk `chunk` of `chunks` starts: the chunks shrink from first to last (chunk c ends at
// the share 1 - (1 - (c+1)/chunks)^2 of the items), so the last ones claimed, which decide
// how long the others wait at the end, are short, with no more claims than equal chunks. The
// caller's wait for the last chunk of a decode step's matmuls went from 3.9% of the CPU time to
// 2.0% (perf, llama-110m Q8_0, one sequence, two threads).
int64_t chunk_start(int64_t items, int64_t chunk, int64_t chunks) {
  const auto done = static_cast<unsigned __int128>(chunk) * static_cast<uint64_t>(2 * chunks - chunk);
  return static_cast<int64_t>(static_cast<unsigned __int128>(items) * done / static_cast<uint64_t>(chunks * chunks));
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  workers_.reserve(static_cast<size_t>(threads - 1));
  for (int share = 1; share < threads; ++share) workers_.emplace_back([this] { worker_loop(); });
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

void ThreadPool::run_chunks(uint64_t job) {
  uint64_t claim = claims_.load(std::memory_order_acquire);
  for (;;) {
    // The counter names its job, so a thread that arrives after the job has ended (and
    // another may have begun) claims nothing from it.
    if ((claim >> kJobShift) != job) return;
    const int64_t chunk = static_cast<int64_t>(claim & kFieldMask);
    const int64_t chunks = static_cast<int64_t>((claim >> kFieldBits) & kFieldMask);
    if (chunk >= chunks) return;
    if (!claims_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel, std::memory_order_acquire)) continue;
    // The job cannot end before this chunk is counted done, so its fields stay valid here.
    const int64_t begin = chunk_start(job_items_, chunk, chunks), end = chunk_start(job_items_, chunk + 1, chunks);
    if (begin < end) (*job_)(begin, end);
    if (done_chunks_.fetch_add(1) + 1 == chunks && caller_sleeping_.load()) {
      std::lock_guard lock(mutex_);
      done_cv_.notify_one();
    }
    claim = claims_.load(std::memory_order_acquire);
  }
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
  const int64_t min_share_cost = bursts_.load(std::memory_order_relaxed) > 0 ? kBurstMinShareCost : kMinShareCost;
  const int shares = static_cast<int>(std::min<int64_t>({size(), items, std::max<int64_t>(1, total_cost / min_share_cost)}));
  if (shares == 1) {
    fn(0, items);
    return;
  }
  // Nobody reads these until the claim counter names the new job, and every chunk of the
  // previous job was counted done before its caller returned.
  const uint64_t job = ((claims_.load(std::memory_order_relaxed) >> kJobShift) + 1) & kJobMask;
  const int64_t chunks = std::min<int64_t>({items, shares * kChunksPerShare, kMaxChunks});
  job_ = &fn;
  job_items_ = items;
  done_chunks_.store(0, std::memory_order_relaxed);
  claims_.store(job << kJobShift | static_cast<uint64_t>(chunks) << kFieldBits, std::memory_order_release);
  // Sequentially consistent against a worker's "sleeping, then check the generation": either
  // it sees this job, or this sees it asleep and wakes it.
  generation_.fetch_add(1);
  if (sleeping_workers_.load() > 0) {
    std::lock_guard lock(mutex_);
    start_cv_.notify_all();
  }
  run_chunks(job);
  const int caller_spins = bursts_.load(std::memory_order_relaxed) > 0 ? kBurstCallerSpins : kSpinIterations;
  for (int spin = 0; spin < caller_spins; ++spin) {
    if (done_chunks_.load(std::memory_order_acquire) == chunks) return;
    SNAPSTREAM_CPU_RELAX();
  }
  std::unique_lock lock(mutex_);
  caller_sleeping_.store(true);
  done_cv_.wait(lock, [&] { return done_chunks_.load() == chunks; });
  caller_sleeping_.store(false);
}

void ThreadPool::worker_loop() {
  uint64_t seen = 0;
  for (;;) {
    bool started = false;
    for (int spin = 0; spin < kSpinIterations || bursts_.load(std::memory_order_relaxed) > 0; ++spin) {
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
    run_chunks(claims_.load(std::memory_order_acquire) >> kJobShift);
  }
}

}  // namespace snapstream::kernels
