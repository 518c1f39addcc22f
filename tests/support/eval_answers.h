// Reads `snapstream eval --task`'s answers.jsonl for the end-to-end tests: lines and right
// answers per row, with each line checked for order and against the scoring rule.
#pragma once

#include <filesystem>
#include <map>
#include <string>

namespace snapstream::test {

struct RowAnswers {
  int lines = 0;
  int right = 0;
};

// Keyed "task,context,policy,budget" as results.csv's first columns. Checks (with Catch2) that
// each row's instances come numbered 0, 1, ... and that every `right` is the scoring rule's
// verdict: the generated text up to its first full stop equals the expected answer, spaces aside.
std::map<std::string, RowAnswers> read_eval_answers(const std::filesystem::path& path);

}  // namespace snapstream::test
