// The evaluation's JSONL texts: malformed lines are refused with their line number, short texts
// are dropped and long ones cut to the document length.
#include <catch2/catch.hpp>
#include <fstream>

#include "eval/eval_texts.h"
#include "runtime/errors.h"
#include "runtime/model.h"
#include "tests/support/stories_model.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;

TEST_CASE("eval texts refuse a malformed line by number and keep documents of the asked length", "[eval]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  test::TempDir dir;
  const std::string long_text = "Once upon a time there was a little girl who liked to play in the park with her dog every day.";
  {
    std::ofstream(dir / "good.jsonl") << "{\"text\": \"" << long_text << "\"}\n\n{\"text\": \"Hi.\"}\n";
    const auto texts = eval::read_eval_texts((dir / "good.jsonl").string(), model->tokenizer, 12);
    REQUIRE(texts.documents.size() == 1);
    CHECK(texts.documents[0].size() == 12);
    CHECK(texts.documents[0][0] == model->tokenizer.bos_id());
    CHECK(texts.dropped_short == 1);
  }
  const std::pair<std::string, std::string> bad[] = {
      {"{\"text\": \"fine\"}\n{\"text\": 3}\n", ":2: 'text' must be a string"},
      {"{\"text\": \"fine\"}\n\n[1, 2]\n", ":3: each line must be a JSON object"},
      {"{\"text\": \"fine\"}\n{\"text\": \"unterminated}\n", ":2: not valid JSON"},
      {"{\"prompt\": \"no text\"}\n", ":1: 'text' must be a string"},
  };
  for (const auto& [content, message] : bad) {
    INFO(content);
    std::ofstream(dir / "bad.jsonl") << content;
    CHECK_THROWS_WITH(eval::read_eval_texts((dir / "bad.jsonl").string(), model->tokenizer, 4),
                      Catch::Contains((dir / "bad.jsonl").string() + message));
  }
}
