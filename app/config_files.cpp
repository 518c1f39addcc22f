// Config discovery: $SNAPSTREAM_CONFIGS, then the source tree's configs/.
#include "app/config_files.h"

#include <cstdlib>

#include "graph/model_config_file.h"
#include "runtime/errors.h"

namespace snapstream::app {

std::filesystem::path config_root() {
  if (const char* env = std::getenv("SNAPSTREAM_CONFIGS"); env != nullptr && *env != '\0') return env;
  return SNAPSTREAM_CONFIG_DIR;
}

std::filesystem::path resolve_config(const std::string& folder, const std::string& name_or_path) {
  std::error_code ignored;
  if (std::filesystem::is_regular_file(name_or_path, ignored)) return name_or_path;
  const auto path = config_root() / folder / (name_or_path + ".json");
  if (std::filesystem::is_regular_file(path, ignored)) return path;
  std::string known;
  for (const auto& entry : std::filesystem::directory_iterator(config_root() / folder, ignored))
    if (entry.path().extension() == ".json") known += (known.empty() ? "" : ", ") + entry.path().stem().string();
  throw runtime::ConfigError("no " + folder + " config '" + name_or_path + "' (looked for " + path.string() + "; known: " + known + ")");
}

graph::ModelShape load_model_config(const std::string& name_or_path) {
  return graph::read_model_config(resolve_config("models", name_or_path));
}

}  // namespace snapstream::app
