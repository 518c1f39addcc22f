// Tokenizer parity with real vocabularies: every case of every .inp/.out pair in the shared
// vocab folder (texts tokenised by the reference without BOS/EOS and with special parsing off)
// gives exactly the expected ids, and decoding them gives the text back.
#include <catch2/catch.hpp>
#include <sstream>

#include "runtime/tokenizer_gguf.h"
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
    const Tokenizer tokenizer = load_gguf_tokenizer(path.string());
    const auto cases = read_cases(inp);
    CHECK(cases.size() > 10);
    for (const auto& c : cases) {
      INFO(path.filename().string() << ": text \"" << c.text << "\"");
      const auto ids = tokenizer.encode(c.text, false, false);
      CHECK(ids_text(ids) == ids_text(c.ids));
      CHECK(tokenizer.decode(ids) == c.text);
    }
  }
  CHECK(vocabularies >= 9);
}
