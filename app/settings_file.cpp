// The flat TOML subset of settings files, parsed line by line.
#include "app/settings_file.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "runtime/errors.h"

namespace snapstream::app {
namespace {

class LineParser {
 public:
  LineParser(const std::string& line, const std::string& where) : line_(line), where_(where) {}

  void skip_blanks() {
    while (pos_ < line_.size() && (line_[pos_] == ' ' || line_[pos_] == '\t')) ++pos_;
  }
  bool at_end_or_comment() {
    skip_blanks();
    return pos_ >= line_.size() || line_[pos_] == '#';
  }
  char peek() const { return pos_ < line_.size() ? line_[pos_] : '\0'; }

  // A bare TOML key: letters, digits, '-' and '_'.
  std::string key() {
    const size_t start = pos_;
    while (pos_ < line_.size() && (std::isalnum(static_cast<unsigned char>(line_[pos_])) != 0 || line_[pos_] == '-' || line_[pos_] == '_'))
      ++pos_;
    if (pos_ == start) fail("expected a setting name (letters, digits, '-' or '_')");
    return line_.substr(start, pos_ - start);
  }

  void expect(char c, const std::string& what) {
    skip_blanks();
    if (peek() != c) fail("expected " + what);
    ++pos_;
  }

  SettingValue value() {
    skip_blanks();
    SettingValue v;
    if (peek() == '"') {
      v.kind = SettingValue::Kind::String;
      v.text = basic_string();
    } else if (peek() == '\'') {
      v.kind = SettingValue::Kind::String;
      v.text = literal_string();
    } else {
      const size_t start = pos_;
      while (pos_ < line_.size() && line_[pos_] != ' ' && line_[pos_] != '\t' && line_[pos_] != '#') ++pos_;
      v.text = line_.substr(start, pos_ - start);
      if (v.text == "true" || v.text == "false") {
        v.kind = SettingValue::Kind::Boolean;
      } else if (is_number(v.text)) {
        v.kind = SettingValue::Kind::Number;
        v.text.erase(std::remove(v.text.begin(), v.text.end(), '_'), v.text.end());
      } else {
        fail("'" + v.text + "' is not a value: write strings in double quotes, numbers, or true/false");
      }
    }
    return v;
  }

  [[noreturn]] void fail(const std::string& problem) const { throw runtime::ConfigError(where_ + ": " + problem); }

 private:
  static bool is_number(const std::string& text) {
    if (text.empty()) return false;
    size_t i = (text[0] == '+' || text[0] == '-') ? 1 : 0;
    bool digits = false;
    for (; i < text.size(); ++i) {
      const char c = text[i];
      if (std::isdigit(static_cast<unsigned char>(c)) != 0) {
        digits = true;
      } else if (c != '_' && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-') {
        return false;
      }
    }
    return digits;
  }

  std::string basic_string() {
    ++pos_;  // the opening quote
    std::string out;
    while (pos_ < line_.size() && line_[pos_] != '"') {
      char c = line_[pos_++];
      if (c == '\\') {
        if (pos_ >= line_.size()) break;
        const char escaped = line_[pos_++];
        switch (escaped) {
          case '"': c = '"'; break;
          case '\\': c = '\\'; break;
          case 'n': c = '\n'; break;
          case 't': c = '\t'; break;
          default: fail(std::string("unknown escape '\\") + escaped + "' in a string");
        }
      }
      out += c;
    }
    if (pos_ >= line_.size()) fail("the string has no closing '\"'");
    ++pos_;
    return out;
  }

  std::string literal_string() {
    const size_t start = ++pos_;
    const size_t end = line_.find('\'', start);
    if (end == std::string::npos) fail("the string has no closing \"'\"");
    pos_ = end + 1;
    return line_.substr(start, end - start);
  }

  const std::string& line_;
  std::string where_;
  size_t pos_ = 0;
};

}  // namespace

std::vector<SettingValue> parse_settings(const std::string& text, const std::string& source) {
  std::vector<SettingValue> settings;
  std::set<std::string> seen;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    LineParser parser(line, source + ":" + std::to_string(number));
    if (parser.at_end_or_comment()) continue;
    if (parser.peek() == '[')
      parser.fail("sections are not used: write every setting at the top level as `name = value`");
    const std::string name = parser.key();
    parser.expect('=', "'=' after '" + name + "'");
    SettingValue value = parser.value();
    if (!parser.at_end_or_comment()) parser.fail("unexpected text after the value of '" + name + "'");
    if (!seen.insert(name).second) parser.fail("'" + name + "' is set twice");
    value.name = name;
    value.line = number;
    settings.push_back(std::move(value));
  }
  return settings;
}

std::vector<SettingValue> read_settings_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw runtime::ConfigError("cannot read the settings file " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return parse_settings(text.str(), path.string());
}

}  // namespace snapstream::app
