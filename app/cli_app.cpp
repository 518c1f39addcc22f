// The whole `snapstream` command line: its global options and every subcommand.
#include <spdlog/spdlog.h>

#include "app/commands.h"
#include "app/settings_sources.h"

namespace snapstream::app {

void add_all_commands(CLI::App& app, int argc, char** argv) {
  app.require_subcommand(1);
  app.fallthrough();  // global options such as --log-level may follow the subcommand
  app.add_option("--log-level", "trace, debug, info, warn, error or off")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}))
      ->each([](const std::string& level) { spdlog::set_level(spdlog::level::from_str(level)); });
  add_generate_command(app);
  add_make_model_command(app);
  add_info_command(app);
  add_tokenize_command(app);
  add_bench_command(app);
  add_batch_command(app);
  add_serve_command(app);
  add_simulate_command(app);
  add_calibrate_command(app);
  add_plan_command(app);
  add_eval_command(app, argc, argv);
  add_tasks_command(app);
  add_convert_command(app);
}

const SettingsSources& serve_settings_sources() {
  static const SettingsSources sources{"serve", "SNAPSTREAM_SERVE_"};
  return sources;
}

}  // namespace snapstream::app
