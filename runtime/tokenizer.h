// The tokenizer of a model, whatever its vocabulary: SentencePiece BPE with merge scores and
// byte fallback (Llama 2, Mistral, TinyLlama, Phi-3) or byte-level BPE with ranked merges and a
// named pre-tokenizer (GPT-2, Llama 3, Qwen2, SmolLM, StarCoder, Falcon, DeepSeek, MPT).
// Special tokens are cut out of the text before either runs.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/bpe_merges.h"
#include "runtime/pre_tokenizer.h"

namespace snapstream::runtime {

// GGUF's tokenizer.ggml.token_type values 1..6.
enum class TokenKind : uint8_t { Normal, Unknown, Control, UserDefined, Unused, Byte };

enum class TokenizerModel : uint8_t { SentencePiece, BytePairs };

// Everything a tokenizer is built from, as a GGUF file (or llama2.c's tokenizer) holds it.
struct Vocabulary {
  TokenizerModel model = TokenizerModel::SentencePiece;
  // SentencePiece: text with spaces as ' '; byte pieces spelled "<0xXX>". Byte-level BPE: the
  // stored symbols (byte_symbols.h), user-defined and control tokens as plain text.
  std::vector<std::string> pieces;
  std::vector<float> scores;  // SentencePiece merge scores; may be empty for BPE
  std::vector<TokenKind> kinds;
  std::vector<std::string> merges;  // BPE: "left right", by rank
  std::string pre = "default";      // BPE pre-tokenizer name (tokenizer.ggml.pre)
  int32_t bos_id = -1;
  int32_t eos_id = -1;
  int32_t unknown_id = -1;
  std::vector<int32_t> end_of_generation;  // beyond EOS: EOT, EOM and the like
  bool add_bos = true;
  bool add_eos = false;
  bool add_space_prefix = true;  // SentencePiece: a space before the text
  bool ignore_merges = false;    // BPE: a word that is a whole token is taken as is (Llama 3)
};

class Tokenizer {
 public:
  Tokenizer() = default;
  explicit Tokenizer(Vocabulary vocabulary);
  // A SentencePiece vocabulary with the default flags.
  Tokenizer(std::vector<std::string> pieces, std::vector<float> scores, std::vector<TokenKind> kinds, int32_t bos_id,
            int32_t eos_id, int32_t unknown_id);
  Tokenizer(Tokenizer&&) noexcept;
  Tokenizer& operator=(Tokenizer&&) noexcept;
  ~Tokenizer();

  int32_t vocab_size() const { return static_cast<int32_t>(v_.pieces.size()); }
  int32_t bos_id() const { return v_.bos_id; }
  int32_t eos_id() const { return v_.eos_id; }
  const Vocabulary& vocabulary() const { return v_; }
  TokenizerModel model() const { return v_.model; }
  const std::string& piece(int32_t id) const { return v_.pieces.at(static_cast<size_t>(id)); }
  float score(int32_t id) const { return v_.scores.empty() ? 0.0f : v_.scores.at(static_cast<size_t>(id)); }
  TokenKind kind(int32_t id) const { return v_.kinds.at(static_cast<size_t>(id)); }
  // Whether generation ends at this token: EOS, EOT, EOM, a token spelled like one, or a
  // control BOS.
  bool ends_generation(int32_t id) const;
  const std::vector<int32_t>& end_of_generation_ids() const { return end_of_generation_; }

  // `add_special` adds BOS and EOS as the vocabulary's flags say; `parse_special` turns the
  // text of control tokens ("<|im_start|>") into those tokens (user-defined ones always are).
  std::vector<int32_t> encode(std::string_view text, bool add_special = true, bool parse_special = false) const;

  // The bytes token `id` stands for when it follows `previous` (-1 for none): byte tokens
  // become their byte, control tokens nothing (their text with `render_special`), and
  // SentencePiece's leading space after BOS is dropped.
  std::string token_bytes(int32_t id, int32_t previous, bool render_special = false) const;
  // The text of a whole sequence: token_bytes from the start, the first token read as if after
  // BOS. May hold invalid UTF-8 if the ids split a character.
  std::string decode(std::span<const int32_t> ids, bool render_special = false) const;

  // Throws InvalidRequestError unless every id is in range.
  void check_ids(std::span<const int32_t> ids) const;

  // The id of the token spelled `piece` exactly, or -1.
  int32_t lookup(std::string_view piece) const;

 private:
  void encode_sentence_piece(std::string_view text, std::vector<int32_t>& ids) const;
  void encode_byte_pairs(std::string_view text, std::vector<int32_t>& ids) const;

  Vocabulary v_;
  std::unordered_map<std::string, int32_t> ids_;
  std::array<int32_t, 256> byte_tokens_{};
  // Special tokens matched in text, longest first.
  std::vector<int32_t> special_tokens_;
  std::vector<int32_t> end_of_generation_;
  BpeMerges merges_;
  std::unique_ptr<PreTokenizer> pre_tokenizer_;
};

}  // namespace snapstream::runtime
