// The subcommands of the `snapstream` binary; each registers its options and its action.
#pragma once

#include <CLI/CLI.hpp>

namespace snapstream::app {

void add_generate_command(CLI::App& app);
void add_make_model_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_batch_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_plan_command(CLI::App& app);
// argc/argv: the command line, recorded in the report as the way to regenerate it.
void add_eval_command(CLI::App& app, int argc, char** argv);
void add_tasks_command(CLI::App& app);
void add_convert_command(CLI::App& app);

// The global options (--log-level) and every subcommand above.
void add_all_commands(CLI::App& app, int argc, char** argv);

struct SettingsSources;
// Where `serve` also reads its settings: --config FILE and SNAPSTREAM_SERVE_<NAME> variables.
const SettingsSources& serve_settings_sources();

}  // namespace snapstream::app
