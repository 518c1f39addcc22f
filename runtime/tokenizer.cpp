// BPE encoding with a heap of candidate merges over a linked list of symbols, so long prompts
// encode in O(n log n). The merge order equals the reference's repeated scan: highest score
// first, leftmost on ties.
#include "runtime/tokenizer.h"

#include <cstdio>
#include <queue>

#include "runtime/errors.h"

namespace snapstream::runtime {
namespace {

// Parses "<0xXX>" into its byte value, or returns -1.
int parse_byte_piece(std::string_view piece) {
  if (piece.size() != 6 || piece.substr(0, 3) != "<0x" || piece[5] != '>') return -1;
  int value = 0;
  for (char c : piece.substr(3, 2)) {
    value <<= 4;
    if (c >= '0' && c <= '9') value |= c - '0';
    else if (c >= 'A' && c <= 'F') value |= c - 'A' + 10;
    else if (c >= 'a' && c <= 'f') value |= c - 'a' + 10;
    else return -1;
  }
  return value;
}

size_t utf8_char_length(std::string_view text, size_t start) {
  size_t length = 1;
  while (start + length < text.size() && length < 4 && (static_cast<unsigned char>(text[start + length]) & 0xC0) == 0x80)
    ++length;
  return length;
}

}  // namespace

Tokenizer::Tokenizer(std::vector<std::string> pieces, std::vector<float> scores, std::vector<TokenKind> kinds,
                     int32_t bos_id, int32_t eos_id, int32_t unknown_id)
    : pieces_(std::move(pieces)), scores_(std::move(scores)), kinds_(std::move(kinds)), bos_id_(bos_id), eos_id_(eos_id),
      unknown_id_(unknown_id) {
  const auto n = static_cast<int32_t>(pieces_.size());
  if (scores_.size() != pieces_.size() || kinds_.size() != pieces_.size())
    throw Error("tokenizer: pieces, scores and kinds differ in length");
  for (int32_t id : {bos_id_, eos_id_})
    if (id < 0 || id >= n) throw Error("tokenizer: BOS/EOS id " + std::to_string(id) + " is outside the vocabulary");
  if (unknown_id_ >= n) unknown_id_ = -1;
  byte_tokens_.fill(-1);
  ids_.reserve(pieces_.size());
  for (int32_t id = 0; id < n; ++id) {
    ids_.emplace(pieces_[static_cast<size_t>(id)], id);  // the first of duplicate pieces wins
    const int byte = parse_byte_piece(pieces_[static_cast<size_t>(id)]);
    if (byte >= 0 && byte_tokens_[static_cast<size_t>(byte)] < 0) byte_tokens_[static_cast<size_t>(byte)] = id;
  }
}

int32_t Tokenizer::lookup(std::string_view piece) const {
  const auto it = ids_.find(std::string(piece));
  return it == ids_.end() ? -1 : it->second;
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_bos, bool add_eos) const {
  std::vector<int32_t> symbols;
  auto push_text = [&](std::string_view character) {
    if (const int32_t id = lookup(character); id >= 0) {
      symbols.push_back(id);
      return;
    }
    for (char c : character) {
      const int32_t byte_id = byte_tokens_[static_cast<unsigned char>(c)];
      if (byte_id >= 0) symbols.push_back(byte_id);
      else if (unknown_id_ >= 0) symbols.push_back(unknown_id_);
    }
  };
  if (!text.empty()) push_text(" ");
  for (size_t i = 0; i < text.size();) {
    const size_t length = utf8_char_length(text, i);
    push_text(text.substr(i, length));
    i += length;
  }

  // Doubly linked list over `symbols`; merged-away entries get id -1.
  const auto n = static_cast<int64_t>(symbols.size());
  std::vector<int64_t> prev(static_cast<size_t>(n)), next(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    prev[static_cast<size_t>(i)] = i - 1;
    next[static_cast<size_t>(i)] = i + 1 < n ? i + 1 : -1;
  }
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
    const int64_t right = next[static_cast<size_t>(left)];
    if (right < 0) return;
    const int32_t a = symbols[static_cast<size_t>(left)], b = symbols[static_cast<size_t>(right)];
    const int32_t merged = lookup(pieces_[static_cast<size_t>(a)] + pieces_[static_cast<size_t>(b)]);
    if (merged >= 0) heap.push({scores_[static_cast<size_t>(merged)], left, a, b, merged});
  };
  for (int64_t i = 0; i + 1 < n; ++i) consider(i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    const int64_t right = next[static_cast<size_t>(c.left)];
    // Skip candidates whose symbols changed since they were queued.
    if (symbols[static_cast<size_t>(c.left)] != c.left_id || right < 0 || symbols[static_cast<size_t>(right)] != c.right_id)
      continue;
    symbols[static_cast<size_t>(c.left)] = c.merged_id;
    symbols[static_cast<size_t>(right)] = -1;
    next[static_cast<size_t>(c.left)] = next[static_cast<size_t>(right)];
    if (next[static_cast<size_t>(right)] >= 0) prev[static_cast<size_t>(next[static_cast<size_t>(right)])] = c.left;
    consider(prev[static_cast<size_t>(c.left)]);
    consider(c.left);
  }

  std::vector<int32_t> ids;
  ids.reserve(symbols.size() + 2);
  if (add_bos) ids.push_back(bos_id_);
  for (int64_t i = n > 0 ? 0 : -1; i >= 0; i = next[static_cast<size_t>(i)]) ids.push_back(symbols[static_cast<size_t>(i)]);
  if (add_eos) ids.push_back(eos_id_);
  return ids;
}

std::string Tokenizer::token_bytes(int32_t id, int32_t previous) const {
  if (id < 0 || id >= vocab_size()) return {};
  const std::string& text = pieces_[static_cast<size_t>(id)];
  switch (kinds_[static_cast<size_t>(id)]) {
    case TokenKind::Control:
    case TokenKind::Unknown: return {};
    case TokenKind::Byte: {
      const int byte = parse_byte_piece(text);
      return byte >= 0 ? std::string(1, static_cast<char>(byte)) : text;
    }
    case TokenKind::Normal: break;
  }
  if (previous == bos_id_ && !text.empty() && text[0] == ' ') return text.substr(1);
  return text;
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  std::string out;
  int32_t previous = -1;
  for (int32_t id : ids) {
    out += token_bytes(id, previous);
    previous = id;
  }
  return out;
}

void Tokenizer::check_ids(std::span<const int32_t> ids) const {
  for (int32_t id : ids)
    if (id < 0 || id >= vocab_size())
      throw InvalidRequestError("token id " + std::to_string(id) + " is outside the vocabulary (0.." +
                                std::to_string(vocab_size() - 1) + ")");
}

}  // namespace snapstream::runtime
