// Finding and reading the JSON files under configs/ (model shapes for now).
#pragma once

#include <filesystem>
#include <string>

#include "runtime/model_config.h"

namespace snapstream::server {

// $SNAPSTREAM_CONFIGS if set, else the source tree's configs/ folder.
std::filesystem::path config_root();

// configs/models/<name>.json parsed into a ModelConfig; throws ConfigError naming the file.
ModelConfig load_model_config(const std::string& name);

}  // namespace snapstream::server
