// SentencePiece BPE with merge scores and byte fallback: each UTF-8 character maps to its piece
// (or its bytes' tokens), then adjacent pairs merge best score first, leftmost on ties. A heap
// of candidate merges over a linked list of symbols keeps long prompts O(n log n).
#include <queue>

#include "runtime/symbol_links.h"
#include "runtime/tokenizer.h"

namespace snapstream::runtime {
namespace {

size_t utf8_char_length(std::string_view text, size_t start) {
  size_t length = 1;
  while (start + length < text.size() && length < 4 && (static_cast<unsigned char>(text[start + length]) & 0xC0) == 0x80)
    ++length;
  return length;
}

}  // namespace

void Tokenizer::encode_sentence_piece(std::string_view text, std::vector<int32_t>& ids) const {
  std::vector<int32_t> symbols;
  auto push_text = [&](std::string_view character) {
    if (const int32_t id = lookup(character); id >= 0) {
      symbols.push_back(id);
      return;
    }
    for (char c : character) {
      const int32_t byte_id = byte_tokens_[static_cast<unsigned char>(c)];
      if (byte_id >= 0) symbols.push_back(byte_id);
      else if (v_.unknown_id >= 0) symbols.push_back(v_.unknown_id);
    }
  };
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_char_length(text, i);
    push_text(text.substr(i, length));
    i += length;
  }

  // Merged-away entries get id -1.
  const auto n = static_cast<int64_t>(symbols.size());
  SymbolLinks links(n);
  struct Candidate {
    float score;
    int64_t left;
    int32_t left_id, right_id, merged_id;
    bool operator<(const Candidate& other) const {
      if (score != other.score) return score < other.score;
      return left > other.left;  // earlier position first on equal scores
    }
  };
  std::priority_queue<Candidate> heap;
  auto consider = [&](int64_t left) {
    if (left < 0) return;
    const int64_t right = links.after(left);
    if (right < 0) return;
    const int32_t a = symbols[static_cast<size_t>(left)], b = symbols[static_cast<size_t>(right)];
    const int32_t merged = lookup(v_.pieces[static_cast<size_t>(a)] + v_.pieces[static_cast<size_t>(b)]);
    if (merged >= 0) heap.push({v_.scores[static_cast<size_t>(merged)], left, a, b, merged});
  };
  for (int64_t i = 0; i + 1 < n; ++i) consider(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const int64_t right = links.after(c.left);
    // Skip candidates whose symbols changed since they were queued.
    if (symbols[static_cast<size_t>(c.left)] != c.left_id || right < 0 || symbols[static_cast<size_t>(right)] != c.right_id)
      continue;
    symbols[static_cast<size_t>(c.left)] = c.merged_id;
    symbols[static_cast<size_t>(right)] = -1;
    links.remove_after(c.left);
    consider(links.before(c.left));
    consider(c.left);
  }

  for (int64_t i = n > 0 ? 0 : -1; i >= 0; i = links.after(i)) ids.push_back(symbols[static_cast<size_t>(i)]);
}

}  // namespace snapstream::runtime
