// Start-up compilation of all buckets and the bucket lookup.
#include "graph/graph_cache.h"

#include <algorithm>
#include <sstream>

#include "graph/errors.h"

namespace snapstream::graph {

GraphCache::GraphCache(const ModelShape& shape, const BucketPlan& buckets, const CompileOptions& options) {
  auto sorted = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
  };
  for (int64_t batch : sorted(buckets.decode_batches)) {
    graphs_.push_back(compile(shape, {Phase::Decode, batch, 1}, options));
    ++compiles_;
  }
  for (int64_t length : sorted(buckets.prefill_lengths)) {
    graphs_.push_back(compile(shape, {Phase::Prefill, 1, length}, options));
    ++compiles_;
  }
  if (buckets.decode_batches.empty() || buckets.prefill_lengths.empty())
    throw GraphError("at least one decode and one prefill bucket are needed");
}

const Graph& GraphCache::smallest(Phase phase, int64_t size) const {
  for (const Graph& g : graphs_) {
    const int64_t bucket = phase == Phase::Decode ? g.key.batch : g.key.length;
    if (g.key.phase == phase && bucket >= size) return g;
  }
  throw GraphError("no " + std::string(phase_name(phase)) + " graph holds " + std::to_string(size) +
                   (phase == Phase::Decode ? " sequences" : " tokens") + "; graphs are only compiled at start-up");
}

const Graph& GraphCache::decode(int64_t batch) const { return smallest(Phase::Decode, batch); }
const Graph& GraphCache::prefill(int64_t length) const { return smallest(Phase::Prefill, length); }

int64_t GraphCache::max_prefill_length() const {
  int64_t best = 0;
  for (const Graph& g : graphs_)
    if (g.key.phase == Phase::Prefill) best = std::max(best, g.key.length);
  return best;
}

int64_t GraphCache::max_decode_batch() const {
  int64_t best = 0;
  for (const Graph& g : graphs_)
    if (g.key.phase == Phase::Decode) best = std::max(best, g.key.batch);
  return best;
}

std::string GraphCache::describe() const {
  std::ostringstream out;
  for (const Graph& g : graphs_)
    out << phase_name(g.key.phase) << " batch " << g.key.batch << " length " << g.key.length << ": " << g.kernel_calls()
        << " kernel calls, " << g.shards << " shard(s), arena " << g.arena_bytes << " bytes\n";
  return out.str();
}

}  // namespace snapstream::graph
