// The subcommands of the `snapstream` binary; each registers its options and its action.
#pragma once

#include <CLI/CLI.hpp>

namespace snapstream::server {

void add_generate_command(CLI::App& app);
void add_make_model_command(CLI::App& app);
void add_info_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_batch_command(CLI::App& app);
void add_serve_command(CLI::App& app);
void add_simulate_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
// argc/argv: the command line, recorded in the report as the way to regenerate it.
void add_eval_command(CLI::App& app, int argc, char** argv);

}  // namespace snapstream::server
