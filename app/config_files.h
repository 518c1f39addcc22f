// Finding and reading the JSON files under configs/ (model shapes for now).
#pragma once

#include <filesystem>
#include <string>

#include "runtime/model_config.h"

namespace snapstream::app {

// $SNAPSTREAM_CONFIGS if set, else the source tree's configs/ folder.
std::filesystem::path config_root();

// `name_or_path` as a file if one exists there, else configs/<folder>/<name>.json; throws
// ConfigError listing the known names when neither exists.
std::filesystem::path resolve_config(const std::string& folder, const std::string& name_or_path);

// configs/models/<name>.json parsed into a ModelConfig; throws ConfigError naming the file.
ModelConfig load_model_config(const std::string& name);

}  // namespace snapstream::app
