// Finding the JSON files under configs/ by name, and reading model configs by name.
#pragma once

#include <filesystem>
#include <string>

#include "graph/model_shape.h"

namespace snapstream::app {

// $SNAPSTREAM_CONFIGS if set, else the source tree's configs/ folder.
std::filesystem::path config_root();

// `name_or_path` as a file if one exists there, else configs/<folder>/<name>.json; throws
// ConfigError listing the known names when neither exists.
std::filesystem::path resolve_config(const std::string& folder, const std::string& name_or_path);

// A model config by name (configs/models/<name>.json) or path, through graph's one reader;
// throws ConfigError when there is no such config and graph::ShapeError for a bad one.
graph::ModelShape load_model_config(const std::string& name_or_path);

}  // namespace snapstream::app
