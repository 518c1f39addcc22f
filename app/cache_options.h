// The SnapStream cache options shared by every command that runs the engine.
#pragma once

#include <CLI/CLI.hpp>

#include "runtime/snapstream_config.h"

namespace snapstream::app {

// Registers --kv-capacity, --sink, --ring, --window, --pool-kernel, --pool, --positions and
// --full-cache on `command`, writing into `config`.
void add_cache_options(CLI::App* command, runtime::SnapStreamConfig& config);

}  // namespace snapstream::app
