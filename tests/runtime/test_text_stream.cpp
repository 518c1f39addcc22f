// The one detokenizer: token bytes, whole UTF-8 characters and stop strings, token by token,
// giving the same text however the ids are pushed.
#include <catch2/catch.hpp>

#include "runtime/synthetic_model.h"
#include "runtime/text_stream.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {

std::string push_all(TextStream& stream, const std::vector<int32_t>& ids) {
  std::string text;
  for (const int32_t id : ids) text += stream.push(id);
  return text;
}

}  // namespace

TEST_CASE("a character split over byte tokens comes out whole", "[text_stream]") {
  const Tokenizer tokenizer = synthetic_tokenizer(400);
  TextStream stream(tokenizer);
  CHECK(stream.push(tokenizer.lookup("<0xC3>")) == "");
  CHECK(stream.push(tokenizer.lookup("<0xA9>")) == "\xC3\xA9");
  CHECK(stream.push(tokenizer.lookup("<0xE2>")) == "");
  CHECK(stream.finish() == "\xEF\xBF\xBD");  // unfinished at the end
}

TEST_CASE("the space a token starts with is dropped after BOS only", "[text_stream]") {
  const Tokenizer tokenizer = synthetic_tokenizer(2000);
  const std::vector<int32_t> ids = tokenizer.encode("hello world", false);
  REQUIRE(tokenizer.token_bytes(ids.front(), -1).front() == ' ');
  TextStream after_bos(tokenizer, tokenizer.bos_id());
  CHECK(push_all(after_bos, ids) + after_bos.finish() == "hello world");
  TextStream plain(tokenizer);
  CHECK(push_all(plain, ids) + plain.finish() == " hello world");
  CHECK(detokenize(tokenizer, ids, tokenizer.bos_id()) == "hello world");
  // decode() reads the ids as a whole text, from its start.
  CHECK(detokenize(tokenizer, ids, tokenizer.bos_id()) == tokenizer.decode(ids));
}

TEST_CASE("text stops before the first stop string and nothing follows", "[text_stream]") {
  const Tokenizer tokenizer = synthetic_tokenizer(2000);
  const std::vector<int32_t> ids = tokenizer.encode("once END twice", false);
  TextStream stream(tokenizer, -1, {"END", "never"});
  std::string text;
  for (const int32_t id : ids) {
    text += stream.push(id);
    CHECK(text.find('E') == std::string::npos);  // no part of the stop string is ever released
  }
  CHECK(stream.stopped());
  CHECK(text == " once ");
  CHECK(stream.finish().empty());
  TextStream no_match(tokenizer, -1, {"ENDING"});
  CHECK(push_all(no_match, ids) + no_match.finish() == " once END twice");
  CHECK_FALSE(no_match.stopped());
}
