// Entry point of the `snapstream` binary: subcommand dispatch and the mapping of errors to
// exit codes (2 for unusable input files, configs or arguments; 1 for anything else).
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>

#include "runtime/errors.h"
#include "server/commands.h"

int main(int argc, char** argv) {
  // stdout carries generated text and JSON; logs go to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("snapstream"));
  spdlog::set_pattern("[%H:%M:%S.%e] [%^%l%$] %v");

  CLI::App app{"snapstream: LLM inference with SnapStream KV-cache compression on an emulated SN40L"};
  app.require_subcommand(1);
  app.fallthrough();  // global options such as --log-level may follow the subcommand
  app.add_option("--log-level", "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->each([](const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); });
  snapstream::server::add_generate_command(app);
  snapstream::server::add_make_model_command(app);
  snapstream::server::add_info_command(app);
  snapstream::server::add_bench_command(app);
  snapstream::server::add_batch_command(app);
  snapstream::server::add_serve_command(app);
  snapstream::server::add_simulate_command(app);
  snapstream::server::add_calibrate_command(app);
  snapstream::server::add_eval_command(app, argc, argv);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const snapstream::InputError& e) {
    spdlog::error("{}", e.what());
    return 2;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  return 0;
}
