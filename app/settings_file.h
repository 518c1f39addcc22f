// Reading a command's settings file: TOML (parsed by toml++) limited to the flat shape a command
// line has (`name = value` at the top level, with strings, numbers and booleans, and comments),
// read strictly so that a typo is an error with its line number, never a silently ignored setting.
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

// Parses `text` (named `source` in errors); the settings come in the file's order. Throws
// ConfigError "SOURCE:LINE: ..." for text that is not TOML (a repeated name, an unterminated
// string, an unknown escape), a section or dotted name, and an array, table or date value.
std::vector<SettingValue> parse_settings(const std::string& text, const std::string& source);

// Reads and parses a file; throws ConfigError when it cannot be read.
std::vector<SettingValue> read_settings_file(const std::filesystem::path& path);

}  // namespace snapstream::app
