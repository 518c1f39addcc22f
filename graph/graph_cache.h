// Every graph the server will run, compiled once at start-up and looked up by bucket. A lookup
// never compiles: a shape with no bucket is an error, not a late compile.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/passes.h"

namespace snapstream::graph {

struct BucketPlan {
  std::vector<int64_t> decode_batches;   // e.g. 1, 2, 4, 8
  std::vector<int64_t> prefill_lengths;  // e.g. 128, 512, 2048
};

class GraphCache {
 public:
  GraphCache(const ModelShape& shape, const BucketPlan& buckets, const CompileOptions& options);

  // The smallest decode graph whose batch bucket holds `batch` sequences.
  const Graph& decode(int64_t batch) const;
  // The smallest prefill graph whose length bucket holds `length` tokens.
  const Graph& prefill(int64_t length) const;

  const std::vector<Graph>& graphs() const { return graphs_; }
  int64_t compiles() const { return compiles_; }
  int64_t max_prefill_length() const;
  int64_t max_decode_batch() const;
  // One line per graph: key, kernel calls, arena bytes.
  std::string describe() const;

 private:
  const Graph& smallest(Phase phase, int64_t size) const;

  std::vector<Graph> graphs_;
  int64_t compiles_ = 0;
};

}  // namespace snapstream::graph
