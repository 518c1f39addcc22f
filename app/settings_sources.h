// A command's settings from a config file and from the environment, turned into command-line
// arguments before parsing, so that one set of checks serves all three sources. The command
// line wins, then the environment, then the config file, then the built-in defaults.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace snapstream::app {

// Registers `--config FILE` on `command`, read by expand_settings before parsing.
void add_config_option(CLI::App* command);

// Where a command's settings may come from besides its command line.
struct SettingsSources {
  std::string command;     // the subcommand, e.g. "serve"
  std::string env_prefix;  // e.g. "SNAPSTREAM_SERVE_": SNAPSTREAM_SERVE_KV_CAPACITY sets --kv-capacity
};

// The environment variable that sets `--option_name`: prefix + upper case, '-' as '_'.
std::string setting_env_name(const SettingsSources& sources, const std::string& option_name);

// The long option names a settings file or the environment may set for `command`: its own
// options and the app's global ones, without help and --config.
std::vector<std::string> setting_names(const CLI::App& app, const CLI::App& command);

// `args` (argv, program name first) with the settings from `--config FILE` (or the
// environment variable <prefix>CONFIG) and from <prefix><NAME> variables appended as
// `--name=value` for every option the command line does not already give. Returns `args`
// unchanged unless `sources.command` is the subcommand invoked. Throws ConfigError for an
// unreadable file, an unknown setting, or a flag whose value is not a boolean.
std::vector<std::string> expand_settings(const CLI::App& app, const SettingsSources& sources, std::vector<std::string> args);

}  // namespace snapstream::app
