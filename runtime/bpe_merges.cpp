// Rank-ordered merging with a heap of candidate pairs over a linked list of symbols, so a long
// word (a run of thousands of spaces) merges in O(n log n) rather than O(n^2).
#include "runtime/bpe_merges.h"

#include <queue>

#include "runtime/symbol_links.h"

namespace snapstream::runtime {

BpeMerges::BpeMerges(const std::vector<std::string>& merges) {
  ranks_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) ranks_.emplace(merges[i], static_cast<int32_t>(i));  // first wins
}

int32_t BpeMerges::rank(const std::string& left, const std::string& right) const {
  std::string key;
  key.reserve(left.size() + 1 + right.size());
  key += left;
  key += ' ';
  key += right;
  const auto it = ranks_.find(key);
  return it == ranks_.end() ? -1 : it->second;
}

std::vector<std::string> BpeMerges::apply(std::string_view word) const {
  std::vector<std::string> symbols;
  for (size_t i = 0; i < word.size();) {
    size_t length = 1;
    while (i + length < word.size() && (static_cast<unsigned char>(word[i + length]) & 0xC0) == 0x80) ++length;
    symbols.emplace_back(word.substr(i, length));
    i += length;
  }
  const auto n = static_cast<int64_t>(symbols.size());
  SymbolLinks links(n);
  std::vector<uint32_t> version(static_cast<size_t>(n), 0);  // bumped when a symbol changes
  struct Candidate {
    int32_t rank;
    int64_t left;
    uint32_t left_version, right_version;
    bool operator<(const Candidate& other) const {
      if (rank != other.rank) return rank > other.rank;  // lowest rank on top
      return left > other.left;                          // then leftmost
    }
  };
  std::priority_queue<Candidate> heap;
  auto consider = [&](int64_t left) {
    if (left < 0) return;
    const int64_t right = links.after(left);
    if (right < 0) return;
    const int32_t r = rank(symbols[static_cast<size_t>(left)], symbols[static_cast<size_t>(right)]);
    if (r >= 0) heap.push({r, left, version[static_cast<size_t>(left)], version[static_cast<size_t>(right)]});
  };
  for (int64_t i = 0; i + 1 < n; ++i) consider(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const auto left = static_cast<size_t>(c.left);
    const int64_t right_index = links.after(c.left);
    // Skip pairs whose symbols changed (or vanished) since they were queued.
    if (version[left] != c.left_version || right_index < 0 || version[static_cast<size_t>(right_index)] != c.right_version) continue;
    const auto right = static_cast<size_t>(right_index);
    symbols[left] += symbols[right];
    symbols[right].clear();
    ++version[left];
    ++version[right];
    links.remove_after(c.left);
    consider(links.before(c.left));
    consider(c.left);
  }
  std::vector<std::string> merged;
  for (int64_t i = n > 0 ? 0 : -1; i >= 0; i = links.after(i)) merged.push_back(std::move(symbols[static_cast<size_t>(i)]));
  return merged;
}

}  // namespace snapstream::runtime
