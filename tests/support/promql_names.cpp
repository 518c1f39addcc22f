// A small PromQL scanner: enough of the grammar to tell metric names from everything else.
#include "tests/support/promql_names.h"

#include <cctype>
#include <stdexcept>

namespace snapstream::test {
namespace {

bool starts_identifier(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_' || c == ':'; }
bool in_identifier(char c) { return starts_identifier(c) || std::isdigit(static_cast<unsigned char>(c)) != 0; }

const std::set<std::string> kKeywords = {"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2"};
// Keywords followed by a parenthesised list of label names.
const std::set<std::string> kLabelListKeywords = {"by", "without", "on", "ignoring", "group_left", "group_right"};

// The index just past the quoted string that starts at `i`.
size_t skip_string(const std::string& text, size_t i) {
  const char quote = text[i];
  for (size_t j = i + 1; j < text.size(); ++j) {
    if (text[j] == '\\' && quote != '`') {
      ++j;
    } else if (text[j] == quote) {
      return j + 1;
    }
  }
  throw std::invalid_argument("unterminated string in: " + text);
}

// The index just past the bracket that closes the one at `i`, strings inside skipped.
size_t skip_bracket(const std::string& text, size_t i, char open, char close) {
  int depth = 0;
  for (size_t j = i; j < text.size();) {
    if (text[j] == '"' || text[j] == '\'' || text[j] == '`') {
      j = skip_string(text, j);
      continue;
    }
    if (text[j] == open) ++depth;
    if (text[j] == close && --depth == 0) return j + 1;
    ++j;
  }
  throw std::invalid_argument(std::string("unclosed '") + open + "' in: " + text);
}

size_t skip_blanks(const std::string& text, size_t i) {
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
  return i;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::set<std::string> promql_metric_names(const std::string& expression) {
  std::set<std::string> names;
  const std::string& text = expression;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '"' || c == '\'' || c == '`') {
      i = skip_string(text, i);
    } else if (c == '{') {
      i = skip_bracket(text, i, '{', '}');
    } else if (c == '[') {
      i = skip_bracket(text, i, '[', ']');
    } else if (c == '$') {  // a Grafana variable: $name or ${name}
      ++i;
      if (i < text.size() && text[i] == '{') {
        i = skip_bracket(text, i, '{', '}');
      } else {
        while (i < text.size() && in_identifier(text[i])) ++i;
      }
    } else if (std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '.') {
      while (i < text.size() && (in_identifier(text[i]) || text[i] == '.')) ++i;  // numbers and durations
    } else if (starts_identifier(c)) {
      const size_t start = i;
      while (i < text.size() && in_identifier(text[i])) ++i;
      const std::string word = text.substr(start, i - start);
      const size_t next = skip_blanks(text, i);
      size_t after_next = next;
      while (after_next < text.size() && in_identifier(text[after_next])) ++after_next;
      const std::string next_word = lower(text.substr(next, after_next - next));
      if (next_word == "by" || next_word == "without") {
        // an aggregation written `sum by (le) (...)`: the grouping list is skipped next
      } else if (kLabelListKeywords.count(lower(word)) != 0) {
        if (next < text.size() && text[next] == '(') i = skip_bracket(text, next, '(', ')');
      } else if (kKeywords.count(lower(word)) == 0 && !(next < text.size() && text[next] == '(')) {
        names.insert(word);
      }
    } else {
      ++i;
    }
  }
  return names;
}

}  // namespace snapstream::test
