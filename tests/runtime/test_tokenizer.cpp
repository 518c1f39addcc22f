// Tokenizer: encode/decode round trips (ASCII, bytes, non-ASCII), BOS/EOS handling and the
// agreement of the llama2.c and GGUF vocabularies of the same model.
#include <catch2/catch.hpp>

#include "runtime/model.h"
#include "runtime/synthetic_model.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {
const char* const kTexts[] = {
    "Once upon a time, there was a little girl named Lily.",
    "Tab\tnewline\nand  double  spaces",
    "Numbers 12345 and symbols #$%&*@~^",
    "caf\xC3\xA9 na\xC3\xAFve \xE2\x82\xAC \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x98\x80",  // café naïve € 日本語 😀
    "\x01\x7F control bytes",
};
}  // namespace

TEST_CASE("stories260K tokenizer round-trips text, bytes and non-ASCII", "[tokenizer]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const std::string file = GENERATE("stories260K.bin", "stories260K.gguf");
  const auto model = load_model((*models / file).string());
  const Tokenizer& tokenizer = model->tokenizer;
  for (const char* text : kTexts) {
    INFO(file << ": " << text);
    const auto ids = tokenizer.encode(text, true);
    REQUIRE(ids.front() == tokenizer.bos_id());
    CHECK(tokenizer.decode(ids) == text);
  }
  // Characters missing from the 512-token vocabulary fall back to byte tokens.
  const auto ids = tokenizer.encode("\xE6\x97\xA5", false);
  REQUIRE(ids.size() == 4);  // the dummy-prefix space, then three bytes
  CHECK(tokenizer.kind(ids[1]) == TokenKind::Byte);
  CHECK(tokenizer.encode("", true) == std::vector<int32_t>{tokenizer.bos_id()});
  // Control tokens in the text stay text unless special parsing is asked for.
  const std::string eos_text = tokenizer.piece(tokenizer.eos_id());
  CHECK(tokenizer.encode(eos_text, false, true) == std::vector<int32_t>{tokenizer.eos_id()});
  CHECK(tokenizer.encode(eos_text, false, false).size() > 1);
}

TEST_CASE("the llama2.c and GGUF vocabularies of stories260K encode alike", "[tokenizer]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const auto bin = load_model((*models / "stories260K.bin").string());
  const auto gguf = load_model((*models / "stories260K.gguf").string());
  for (const char* text : kTexts) CHECK(bin->tokenizer.encode(text) == gguf->tokenizer.encode(text));
}

TEST_CASE("merges take the best score, leftmost first", "[tokenizer]") {
  // Vocabulary: specials, bytes, then pieces; "ab" outranks "bc", so "abc" -> "ab" + "c".
  std::vector<std::string> pieces = {"<unk>", "<s>", "</s>"};
  std::vector<TokenKind> kinds = {TokenKind::Unknown, TokenKind::Control, TokenKind::Control};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    pieces.emplace_back(name);
    kinds.push_back(TokenKind::Byte);
  }
  for (const char* p : {" ", "a", "b", "c", "ab", "bc", " ab"}) {
    pieces.emplace_back(p);
    kinds.push_back(TokenKind::Normal);
  }
  std::vector<float> scores(pieces.size(), 0.0f);
  scores[pieces.size() - 3] = 5.0f;  // ab
  scores[pieces.size() - 2] = 1.0f;  // bc
  scores[pieces.size() - 1] = 9.0f;  // " ab"
  const Tokenizer tokenizer(pieces, scores, kinds, 1, 2, 0);
  const auto id = [&](const std::string& piece) {
    for (int32_t i = 0; i < tokenizer.vocab_size(); ++i)
      if (tokenizer.piece(i) == piece) return i;
    return -1;
  };
  CHECK(tokenizer.encode("abc", false) == std::vector<int32_t>{id(" ab"), id("c")});
  CHECK(tokenizer.encode("bcab", false) == std::vector<int32_t>{id(" "), id("bc"), id("ab")});
  CHECK(tokenizer.decode(tokenizer.encode("abc", true)) == "abc");
}

TEST_CASE("a synthetic vocabulary is valid and round-trips text", "[tokenizer]") {
  const Tokenizer tokenizer = synthetic_tokenizer(2000);
  CHECK(tokenizer.vocab_size() == 2000);
  for (const char* text : kTexts) CHECK(tokenizer.decode(tokenizer.encode(text)) == text);
  CHECK(tokenizer.encode("the", false).size() < 4);  // merges do happen
}
