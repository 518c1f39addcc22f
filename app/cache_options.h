// The SnapStream cache options shared by every command that runs the engine.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "runtime/snapstream_config.h"

namespace snapstream::app {

// Registers --kv-capacity, --sink, --ring, --window, --pool-kernel, --pool, --positions,
// --full-cache and --kv-dtype on `command`, writing into `config`.
void add_cache_options(CLI::App* command, runtime::SnapStreamConfig& config);

// Registers --kv-dtype alone (f16, f32 or q8_0), writing into `kv_dtype`; `default_note` ends
// its help ("f16 by default").
void add_kv_dtype_option(CLI::App* command, kernels::DType& kv_dtype, const std::string& default_note);

}  // namespace snapstream::app
