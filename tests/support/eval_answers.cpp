// answers.jsonl, read back and checked line by line.
#include "tests/support/eval_answers.h"

#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

namespace snapstream::test {
namespace {

std::string without_outer_spaces(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\n");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\n") - first + 1);
}

}  // namespace

std::map<std::string, RowAnswers> read_eval_answers(const std::filesystem::path& path) {
  std::map<std::string, RowAnswers> rows;
  std::ifstream file(path);
  REQUIRE(file);
  for (std::string text; std::getline(file, text);) {
    const auto line = nlohmann::json::parse(text);
    const std::string key = line.at("task").get<std::string>() + "," + std::to_string(line.at("context").get<int64_t>()) + "," +
                            line.at("policy").get<std::string>() + "," + std::to_string(line.at("budget").get<int64_t>());
    RowAnswers& row = rows[key];
    INFO(key << ": " << text);
    CHECK(line.at("instance").get<int>() == row.lines);
    const std::string generated = line.at("generated").get<std::string>();
    const auto stop = generated.find('.');
    const bool answered = stop != std::string::npos &&
                          without_outer_spaces(generated.substr(0, stop + 1)) == without_outer_spaces(line.at("expected").get<std::string>());
    CHECK(line.at("right").get<bool>() == answered);
    ++row.lines;
    row.right += answered;
  }
  return rows;
}

}  // namespace snapstream::test
