// Settings files read with toml++, then held to the flat shape a command line has: top-level
// `name = value` pairs of strings, numbers and booleans, each error naming FILE:LINE.
#include "app/settings_file.h"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>

#include "runtime/errors.h"

namespace snapstream::app {
namespace {

std::string where(const std::string& source, const toml::source_region& region) {
  return source + ":" + std::to_string(region.begin.line);
}

// The shortest text that reads back as the same double, as a user would have typed it.
std::string number_text(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

const char* kind_name(toml::node_type type) {
  switch (type) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    default: return "this kind of value";
  }
}

SettingValue setting(const std::string& name, const toml::node& node, const std::string& source) {
  // TOML allows `"" = 1`; no option has an empty name, and the layer above matches by name.
  if (name.empty())
    throw runtime::ConfigError(where(source, node.source()) + ": an empty name (\"\" or '') is not a setting");
  SettingValue v;
  v.name = name;
  v.line = static_cast<int>(node.source().begin.line);
  if (const auto* text = node.as_string()) {
    v.kind = SettingValue::Kind::String;
    v.text = text->get();
  } else if (const auto* integer = node.as_integer()) {
    v.kind = SettingValue::Kind::Number;
    v.text = std::to_string(integer->get());
  } else if (const auto* real = node.as_floating_point()) {
    v.kind = SettingValue::Kind::Number;
    v.text = number_text(real->get());
  } else if (const auto* boolean = node.as_boolean()) {
    v.kind = SettingValue::Kind::Boolean;
    v.text = boolean->get() ? "true" : "false";
  } else if (node.is_table()) {
    // `[name]` sections and dotted names (`a.b = 1`) both make tables.
    throw runtime::ConfigError(where(source, node.source()) + ": '" + name +
                               "' is a section or a dotted name: write every setting at the top level as `name = value`");
  } else {
    throw runtime::ConfigError(where(source, node.source()) + ": '" + name + "' is " + kind_name(node.type()) +
                               ": write strings in double quotes, numbers, or true/false");
  }
  return v;
}

}  // namespace

std::vector<SettingValue> parse_settings(const std::string& text, const std::string& source) {
  toml::table table;
  try {
    table = toml::parse(std::string_view(text), std::string_view(source));
  } catch (const toml::parse_error& e) {
    std::string problem(e.description());
    if (problem.find("could not determine value type") != std::string::npos)
      problem += ": write strings in double quotes, numbers, or true/false";
    throw runtime::ConfigError(where(source, e.source()) + ": " + problem);
  }
  std::vector<SettingValue> settings;
  for (const auto& [key, node] : table) settings.push_back(setting(std::string(key.str()), node, source));
  // toml++ keeps a table's keys sorted; the file's order is the one users read errors in.
  std::stable_sort(settings.begin(), settings.end(), [](const SettingValue& a, const SettingValue& b) { return a.line < b.line; });
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
