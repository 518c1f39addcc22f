// Byte-level BPE merging: a word's characters are merged pairwise by the rank of each pair in
// the vocabulary's merge list (lower ranks first, the leftmost pair on ties), as GPT-2 does.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace snapstream::runtime {

class BpeMerges {
 public:
  BpeMerges() = default;
  // Merges as GGUF stores them: "left right", rank = position in the list.
  explicit BpeMerges(const std::vector<std::string>& merges);

  // The symbols `word` (UTF-8, in the byte-level alphabet) merges into.
  std::vector<std::string> apply(std::string_view word) const;

  size_t size() const { return ranks_.size(); }

 private:
  int32_t rank(const std::string& left, const std::string& right) const;

  std::unordered_map<std::string, int32_t> ranks_;  // "left right" -> rank
};

}  // namespace snapstream::runtime
