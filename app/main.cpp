// Entry point of the `snapstream` binary: subcommand dispatch and the mapping of errors to
// exit codes (2 for unusable input files, configs or arguments; 1 for anything else).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include "app/commands.h"
#include "app/input_errors.h"
#include "app/process_ranks.h"
#include "app/settings_sources.h"

int main(int argc, char** argv) {
  if (argc < 1) return 2;
  // stdout carries generated text and JSON; logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("snapstream"));
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");

  // Before the command line is read: MPI may take its own arguments out of argv.
  const snapstream::app::ProcessRanks ranks(&argc, &argv);
  CLI::App app{"snapstream: LLM inference with SnapStream KV-cache compression on an emulated SN40L"};
  snapstream::app::add_all_commands(app, argc, argv);

  try {
    const std::vector<std::string> args = snapstream::app::expand_settings(
        app, snapstream::app::serve_settings_sources(), std::vector<std::string>(argv, argv + argc));
    app.name(args.front());
    std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11 takes the arguments last first
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    // --help and --version end here with 0; every refused argument is bad input.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    const int code = snapstream::app::is_input_error(e) ? 2 : 1;
    snapstream::app::end_ranks_after_error(code);
    return code;
  }
  return 0;
}
