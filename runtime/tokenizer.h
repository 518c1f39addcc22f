// Llama / SentencePiece BPE tokenizer with merge scores and byte fallback.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace snapstream::runtime {

enum class TokenKind : uint8_t { Normal, Unknown, Control, Byte };

class Tokenizer {
 public:
  Tokenizer() = default;
  // `pieces` hold plain text (spaces as ' ', not U+2581); byte tokens are spelled "<0xXX>".
  Tokenizer(std::vector<std::string> pieces, std::vector<float> scores, std::vector<TokenKind> kinds, int32_t bos_id,
            int32_t eos_id, int32_t unknown_id);

  int32_t vocab_size() const { return static_cast<int32_t>(pieces_.size()); }
  int32_t bos_id() const { return bos_id_; }
  int32_t eos_id() const { return eos_id_; }
  const std::string& piece(int32_t id) const { return pieces_.at(static_cast<size_t>(id)); }
  float score(int32_t id) const { return scores_.at(static_cast<size_t>(id)); }
  TokenKind kind(int32_t id) const { return kinds_.at(static_cast<size_t>(id)); }

  // SentencePiece encoding: a space is prepended to non-empty text, each UTF-8 character maps
  // to its piece (or to byte tokens), then the best-scoring adjacent merges are applied.
  std::vector<int32_t> encode(std::string_view text, bool add_bos = true, bool add_eos = false) const;

  // The bytes token `id` stands for when it follows `previous` (-1 for none): byte tokens
  // become their byte, control tokens nothing, and a leading space after BOS is dropped.
  std::string token_bytes(int32_t id, int32_t previous) const;
  // Concatenated token_bytes; may hold invalid UTF-8 if the ids split a character.
  std::string decode(std::span<const int32_t> ids) const;

  // Throws InvalidRequestError unless every id is in range.
  void check_ids(std::span<const int32_t> ids) const;

  // The id of the token spelled `piece` exactly, or -1.
  int32_t lookup(std::string_view piece) const;

 private:

  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::vector<TokenKind> kinds_;
  std::unordered_map<std::string, int32_t> ids_;
  std::array<int32_t, 256> byte_tokens_{};
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
  int32_t unknown_id_ = -1;
};

}  // namespace snapstream::runtime
