// The tokenizer's vocabulary tables, special-token cutting, the byte-level BPE path and
// decoding; the SentencePiece merge lives in tokenizer_sentence_piece.cpp.
#include "runtime/tokenizer.h"

#include <algorithm>

#include "runtime/byte_symbols.h"
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

// Spellings of end-of-turn tokens across chat models: generation stops on them too.
constexpr std::string_view kEndOfGenerationTexts[] = {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>",
                                                      "<|eom_id|>"};

bool special_kind(TokenKind kind) { return kind == TokenKind::Control || kind == TokenKind::UserDefined || kind == TokenKind::Unknown; }

}  // namespace

Tokenizer::Tokenizer(std::vector<std::string> pieces, std::vector<float> scores, std::vector<TokenKind> kinds,
                     int32_t bos_id, int32_t eos_id, int32_t unknown_id)
    : Tokenizer(Vocabulary{TokenizerModel::SentencePiece, std::move(pieces), std::move(scores), std::move(kinds), {}, "default",
                           bos_id, eos_id, unknown_id, {}}) {}

Tokenizer::Tokenizer(Vocabulary vocabulary) : v_(std::move(vocabulary)) {
  const auto n = static_cast<int32_t>(v_.pieces.size());
  if (v_.kinds.size() != v_.pieces.size() || (!v_.scores.empty() && v_.scores.size() != v_.pieces.size()))
    throw Error("tokenizer: pieces, scores and kinds differ in length");
  if (v_.model == TokenizerModel::SentencePiece && v_.scores.size() != v_.pieces.size())
    throw Error("tokenizer: a SentencePiece vocabulary needs one score per token");
  for (int32_t id : {v_.bos_id, v_.eos_id})
    if (id < 0 || id >= n) throw Error("tokenizer: BOS/EOS id " + std::to_string(id) + " is outside the vocabulary");
  if (v_.unknown_id >= n) v_.unknown_id = -1;
  byte_tokens_.fill(-1);
  ids_.reserve(v_.pieces.size());
  for (int32_t id = 0; id < n; ++id) {
    const std::string& piece = v_.pieces[static_cast<size_t>(id)];
    ids_.emplace(piece, id);  // the first of duplicate pieces wins
    const int byte = parse_byte_piece(piece);
    if (byte >= 0 && byte_tokens_[static_cast<size_t>(byte)] < 0) byte_tokens_[static_cast<size_t>(byte)] = id;
    if (special_kind(v_.kinds[static_cast<size_t>(id)]) && !piece.empty()) special_tokens_.push_back(id);
  }
  std::stable_sort(special_tokens_.begin(), special_tokens_.end(),
                   [&](int32_t a, int32_t b) { return piece(a).size() > piece(b).size(); });
  end_of_generation_.push_back(v_.eos_id);
  // A generated BOS opens a new document: nothing after it continues the prompt (llama2.c stops
  // there too). Only a control BOS counts; GPT-2 files without a BOS key default it to ",".
  if (kind(v_.bos_id) == TokenKind::Control) end_of_generation_.push_back(v_.bos_id);
  for (const int32_t id : v_.end_of_generation)
    if (id >= 0 && id < n) end_of_generation_.push_back(id);
  for (const std::string_view text : kEndOfGenerationTexts)
    if (const int32_t id = lookup(text); id >= 0 && kind(id) != TokenKind::Normal) end_of_generation_.push_back(id);
  std::sort(end_of_generation_.begin(), end_of_generation_.end());
  end_of_generation_.erase(std::unique(end_of_generation_.begin(), end_of_generation_.end()), end_of_generation_.end());
  if (v_.model == TokenizerModel::BytePairs) {
    merges_ = BpeMerges(v_.merges);
    bool known = true;
    pre_tokenizer_ = std::make_unique<PreTokenizer>(PreTokenizer::for_name(v_.pre, known));
  }
}

Tokenizer::Tokenizer(Tokenizer&&) noexcept = default;
Tokenizer& Tokenizer::operator=(Tokenizer&&) noexcept = default;
Tokenizer::~Tokenizer() = default;

int32_t Tokenizer::lookup(std::string_view piece) const {
  const auto it = ids_.find(std::string(piece));
  return it == ids_.end() ? -1 : it->second;
}

bool Tokenizer::ends_generation(int32_t id) const {
  return std::binary_search(end_of_generation_.begin(), end_of_generation_.end(), id);
}

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  // Cut the text at special tokens, longest first: fragments are text (token -1) or one token.
  struct Fragment {
    std::string_view text;
    int32_t token;
  };
  std::vector<Fragment> fragments = {{text, -1}};
  for (const int32_t special : special_tokens_) {
    if (!parse_special && kind(special) != TokenKind::UserDefined) continue;
    const std::string& spelling = piece(special);
    std::vector<Fragment> cut;
    for (const Fragment& f : fragments) {
      if (f.token >= 0) {
        cut.push_back(f);
        continue;
      }
      size_t start = 0;
      for (size_t at = f.text.find(spelling); at != std::string_view::npos; at = f.text.find(spelling, start)) {
        if (at > start) cut.push_back({f.text.substr(start, at - start), -1});
        cut.push_back({{}, special});
        start = at + spelling.size();
      }
      if (start < f.text.size()) cut.push_back({f.text.substr(start), -1});
    }
    fragments = std::move(cut);
  }

  std::vector<int32_t> ids;
  if (add_special && v_.add_bos) ids.push_back(v_.bos_id);
  bool after_special = true;  // SentencePiece prefixes a space to text at the start or after a special token
  for (const Fragment& f : fragments) {
    if (f.token >= 0) {
      ids.push_back(f.token);
      after_special = true;
      continue;
    }
    if (f.text.empty()) continue;
    if (v_.model == TokenizerModel::BytePairs) {
      encode_byte_pairs(f.text, ids);
    } else if (v_.add_space_prefix && after_special) {
      std::string spaced = " ";
      spaced += f.text;
      encode_sentence_piece(spaced, ids);
    } else {
      encode_sentence_piece(f.text, ids);
    }
    after_special = false;
  }
  if (add_special && v_.add_eos) ids.push_back(v_.eos_id);
  return ids;
}

void Tokenizer::encode_byte_pairs(std::string_view text, std::vector<int32_t>& ids) const {
  for (const std::string& word : pre_tokenizer_->split(text)) {
    const std::string symbols = bytes_to_symbols(word);
    if (v_.ignore_merges)
      if (const int32_t whole = lookup(symbols); whole >= 0) {
        ids.push_back(whole);
        continue;
      }
    for (const std::string& symbol : merges_.apply(symbols)) {
      if (const int32_t id = lookup(symbol); id >= 0) {
        ids.push_back(id);
        continue;
      }
      // A merge result missing from the vocabulary: fall back to its characters.
      for (const std::string& character : BpeMerges().apply(symbol)) {
        const int32_t id = lookup(character);
        if (id >= 0) ids.push_back(id);
        else if (v_.unknown_id >= 0) ids.push_back(v_.unknown_id);
      }
    }
  }
}

std::string Tokenizer::token_bytes(int32_t id, int32_t previous, bool render_special) const {
  if (id < 0 || id >= vocab_size()) return {};
  const std::string& text = piece(id);
  switch (kind(id)) {
    case TokenKind::Control:
    case TokenKind::Unknown:
    case TokenKind::Unused: return render_special ? text : std::string();
    case TokenKind::UserDefined: return text;
    case TokenKind::Byte: {
      const int byte = parse_byte_piece(text);
      return byte >= 0 ? std::string(1, static_cast<char>(byte)) : text;
    }
    case TokenKind::Normal: break;
  }
  if (v_.model == TokenizerModel::BytePairs) return symbols_to_bytes(text);
  if (previous == v_.bos_id && v_.add_space_prefix && !text.empty() && text[0] == ' ') return text.substr(1);
  return text;
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
  std::string out;
  // The ids are a whole text: its first token starts it as if after BOS, so the space
  // SentencePiece prefixed to the text is dropped there too.
  int32_t previous = v_.bos_id;
  for (int32_t id : ids) {
    out += token_bytes(id, previous, render_special);
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
