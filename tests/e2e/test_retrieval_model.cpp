// The committed retrieval model (training/): the file is the one training/README.md names by its
// sha256, and through the real binary it answers every retrieval task's questions with the full
// cache, stored as f32 or as q8_0.
#include <catch2/catch.hpp>
#include <algorithm>
#include <fstream>
#include <regex>
#include <sstream>
#include <string_view>

#include "tests/support/eval_answers.h"
#include "tests/support/test_paths.h"

using namespace snapstream;

namespace {

const std::filesystem::path kModel = std::filesystem::path(SNAPSTREAM_SOURCE_DIR) / "training" / "retrieval-tok512.gguf";
// The model answered 95-100% of its held-out set on each task; a model that does not retrieve
// answers next to none (random digits or names). The margin is for other CPUs' kernels, whose
// float order may turn a close answer.
constexpr double kFullCacheAccuracy = 0.8;
// Under a sanitizer one question costs 40-50 times what it does in the plain tree, and the test is
// there for memory and thread errors on the eval path, which a few questions per task exercise
// as well as twenty; the plain tree asks twenty.
constexpr int kDocuments = std::string_view(SNAPSTREAM_SANITIZER).empty() ? 20 : 5;
constexpr const char* kTasks[] = {"niah", "multikey", "multiquery", "multivalue", "vt"};

std::vector<std::string> cells_of(const std::string& line) {
  std::vector<std::string> cells;
  std::istringstream stream(line);
  for (std::string cell; std::getline(stream, cell, ',');) cells.push_back(cell);
  return cells;
}

// results.csv's accuracy, the column its header names, of the row whose first three columns are
// `prefix`.
double accuracy_of(const std::string& csv, const std::string& prefix) {
  std::istringstream lines(csv);
  std::string header;
  std::getline(lines, header);
  const auto names = cells_of(header);
  const auto column = std::find(names.begin(), names.end(), "accuracy") - names.begin();
  REQUIRE(column < static_cast<long>(names.size()));
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(prefix + ",", 0) == 0) return std::stod(cells_of(line).at(static_cast<size_t>(column)));
  FAIL("no row " << prefix << " in\n" << csv);
  return -1;
}

}  // namespace

TEST_CASE("the committed retrieval model is the file training/README.md names", "[e2e][retrieval]") {
  std::ifstream readme(std::filesystem::path(SNAPSTREAM_SOURCE_DIR) / "training" / "README.md");
  const std::string text((std::istreambuf_iterator<char>(readme)), std::istreambuf_iterator<char>());
  std::smatch named;
  REQUIRE(std::regex_search(text, named, std::regex("([0-9a-f]{64})  retrieval-tok512\\.gguf")));
  const auto sum = test::run_command("sha256sum " + test::shell_quote(kModel.string()));
  REQUIRE(sum.exit_code == 0);
  CHECK(sum.out.substr(0, 64) == named[1].str());
}

TEST_CASE("the committed retrieval model answers every task's questions with the full cache, f32 or q8_0", "[e2e][retrieval]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  // q8_0 keeps each cached key and value to 8 bits a value; a trained model's answers must survive it.
  const std::string kv_dtype = GENERATE("f32", "q8_0");
  INFO("--kv-dtype " << kv_dtype);
  test::TempDir dir;
  // Seed 3 is none of the training seeds (training/recipe.sh).
  const auto result = test::run_command(
      test::shell_quote(test::snapstream_binary().string()) + " eval --model " + test::shell_quote(kModel.string()) +
      " --haystack-model " + test::shell_quote((*models / "stories260K.gguf").string()) +
      " --task niah,multikey,multiquery,multivalue,vt --contexts 1024 --documents " + std::to_string(kDocuments) + " --generate 40 --policies full --seed 3 --kv-dtype " + kv_dtype + " --out " +
      test::shell_quote(dir.path().string()));
  INFO(result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const std::string csv = test::read_text(dir.path() / "results.csv");
  // The same answers one by one: here most are right, so the scoring rule is checked on real hits.
  const auto answers = test::read_eval_answers(dir.path() / "answers.jsonl");
  for (const std::string task : kTasks) {
    INFO(task);
    const double accuracy = accuracy_of(csv, task + ",1024,full");
    CHECK(accuracy >= kFullCacheAccuracy);
    const std::string key = task + ",1024,full,1024";
    REQUIRE(answers.count(key) == 1);
    CHECK(answers.at(key).lines == kDocuments);
    CHECK(answers.at(key).right == Approx(kDocuments * accuracy));
  }
}
