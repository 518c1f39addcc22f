// Merging a config file and environment variables into a command line.
#include "app/settings_sources.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "app/settings_file.h"
#include "runtime/errors.h"

namespace snapstream::app {
namespace {

const std::set<std::string> kNotSettings = {"help", "help-all", "config"};

const CLI::Option* find_long_option(const CLI::App& app, const CLI::App& command, const std::string& name) {
  for (const CLI::App* owner : {&command, &app})
    for (const CLI::Option* option : owner->get_options())
      if (!option->get_lnames().empty() && option->get_lnames().front() == name) return option;
  return nullptr;
}

// The long names the command line gives, and the value of --config among them.
struct CommandLine {
  std::set<std::string> given;
  std::string config_file;
};

CommandLine read_command_line(const std::vector<std::string>& args) {
  CommandLine line;
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& token = args[i];
    if (token == "--") break;
    if (token.rfind("--", 0) != 0) continue;
    const size_t equals = token.find('=');
    const std::string name = token.substr(2, equals == std::string::npos ? std::string::npos : equals - 2);
    line.given.insert(name);
    if (name == "config") {
      if (equals != std::string::npos) {
        line.config_file = token.substr(equals + 1);
      } else if (i + 1 < args.size()) {
        line.config_file = args[i + 1];
      }
      if (line.config_file.empty()) throw runtime::ConfigError("--config needs a file name");
    }
  }
  return line;
}

bool flag_value(const std::string& text, const std::string& where) {
  std::string lower = text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower == "true" || lower == "1" || lower == "yes" || lower == "on") return true;
  if (lower == "false" || lower == "0" || lower == "no" || lower == "off") return false;
  throw runtime::ConfigError(where + ": '" + text + "' is not a boolean (true or false)");
}

// A setting as arguments: a flag appears only when true; an empty value leaves the default.
void append_setting(std::vector<std::string>& args, const CLI::Option& option, const std::string& name,
                    const std::string& value, const std::string& where) {
  if (option.get_items_expected_max() == 0) {
    if (flag_value(value, where)) args.push_back("--" + name);
    return;
  }
  if (value.empty()) return;
  args.push_back("--" + name + "=" + value);
}

}  // namespace

void add_config_option(CLI::App* command) {
  command->add_option("--config", "settings file: `name = value` lines naming this command's long options "
                                  "(the command line and the environment take precedence)")
      ->type_name("FILE");
}

std::string setting_env_name(const SettingsSources& sources, const std::string& option_name) {
  std::string name = sources.env_prefix;
  for (const char c : option_name) name += c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

std::vector<std::string> setting_names(const CLI::App& app, const CLI::App& command) {
  std::vector<std::string> names;
  for (const CLI::App* owner : {&command, &app})
    for (const CLI::Option* option : owner->get_options()) {
      if (option->get_lnames().empty()) continue;
      const std::string& name = option->get_lnames().front();
      if (kNotSettings.count(name) == 0 && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
    }
  return names;
}

std::vector<std::string> expand_settings(const CLI::App& app, const SettingsSources& sources, std::vector<std::string> args) {
  const auto invoked = std::find_if(args.begin() + std::min<size_t>(1, args.size()), args.end(), [&app](const std::string& token) {
    return !app.get_subcommands([&token](const CLI::App* sub) { return sub->get_name() == token; }).empty();
  });
  if (invoked == args.end() || *invoked != sources.command) return args;
  const CLI::App& command = *app.get_subcommands([&sources](const CLI::App* sub) { return sub->get_name() == sources.command; }).front();

  const CommandLine line = read_command_line(args);
  std::string config_file = line.config_file;
  const std::string config_env = setting_env_name(sources, "config");
  if (config_file.empty())
    if (const char* env = std::getenv(config_env.c_str()); env != nullptr) config_file = env;  // empty: none

  const std::vector<std::string> known = setting_names(app, command);
  std::vector<std::string> expanded = args;
  std::vector<std::string> from_env;
  std::set<std::string> set_by_env;
  int from_file = 0;
  for (const std::string& name : known) {
    if (line.given.count(name) != 0) continue;
    const std::string env_name = setting_env_name(sources, name);
    const char* env = std::getenv(env_name.c_str());
    if (env == nullptr || *env == '\0') continue;  // an empty variable is an unset one, as in compose files
    append_setting(expanded, *find_long_option(app, command, name), name, env, env_name);
    set_by_env.insert(name);
    from_env.push_back(env_name);
  }
  if (!config_file.empty()) {
    for (const SettingValue& setting : read_settings_file(config_file)) {
      const std::string where = config_file + ":" + std::to_string(setting.line);
      if (setting.name == "config") throw runtime::ConfigError(where + ": a settings file cannot name another one");
      if (std::find(known.begin(), known.end(), setting.name) == known.end())
        throw runtime::ConfigError(where + ": '" + setting.name + "' is not a setting of `snapstream " + sources.command +
                          "`; settings are the long options of `snapstream " + sources.command +
                          " --help`, without the dashes");
      const CLI::Option& option = *find_long_option(app, command, setting.name);
      if (option.get_items_expected_max() == 0 && setting.kind != SettingValue::Kind::Boolean)
        throw runtime::ConfigError(where + ": '" + setting.name + "' is a switch: write true or false");
      if (line.given.count(setting.name) != 0 || set_by_env.count(setting.name) != 0) continue;
      append_setting(expanded, option, setting.name, setting.text, where);
      ++from_file;
    }
  }
  if (!from_env.empty()) {
    std::string names;
    for (const auto& name : from_env) names += (names.empty() ? "" : ", ") + name;
    spdlog::info("settings from the environment: {}", names);
  }
  if (from_file > 0) spdlog::info("settings from {}: {} of them", config_file, from_file);
  return expanded;
}

}  // namespace snapstream::app
