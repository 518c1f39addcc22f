// Reading a command's settings file: the flat subset of TOML that a command line needs
// (`name = value` lines, with strings, numbers and booleans, and comments), read strictly so
// that a typo is an error with its line number, never a silently ignored setting.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace snapstream::app {

struct SettingValue {
  enum class Kind { String, Number, Boolean };
  std::string name;
  std::string text;  // the value as it would be typed on the command line (strings unquoted)
  Kind kind = Kind::String;
  int line = 0;
};

// Parses `text` (named `source` in errors). Throws ConfigError "SOURCE:LINE: ..." for a line
// that is not `name = value`, a section header, a repeated name, an unterminated string or an
// unknown escape.
std::vector<SettingValue> parse_settings(const std::string& text, const std::string& source);

// Reads and parses a file; throws ConfigError when it cannot be read.
std::vector<SettingValue> read_settings_file(const std::filesystem::path& path);

}  // namespace snapstream::app
