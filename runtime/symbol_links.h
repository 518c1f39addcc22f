// The doubly linked list both BPE merges walk: symbols by index, a merge folding a symbol's
// right neighbour into it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace snapstream::runtime {

struct SymbolLinks {
  explicit SymbolLinks(int64_t n) : prev(static_cast<size_t>(n)), next(static_cast<size_t>(n)) {
    for (int64_t i = 0; i < n; ++i) {
      prev[static_cast<size_t>(i)] = i - 1;
      next[static_cast<size_t>(i)] = i + 1 < n ? i + 1 : -1;
    }
  }

  int64_t after(int64_t i) const { return next[static_cast<size_t>(i)]; }
  int64_t before(int64_t i) const { return prev[static_cast<size_t>(i)]; }

  // Unlinks the symbol after `left` (which absorbed it).
  void remove_after(int64_t left) {
    const int64_t right = next[static_cast<size_t>(left)];
    next[static_cast<size_t>(left)] = next[static_cast<size_t>(right)];
    if (next[static_cast<size_t>(right)] >= 0) prev[static_cast<size_t>(next[static_cast<size_t>(right)])] = left;
  }

  std::vector<int64_t> prev, next;
};

}  // namespace snapstream::runtime
