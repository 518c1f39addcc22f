// JSON model configs. Unknown keys are allowed so one file can also carry what later rooms
// (the dataflow simulator) read from it.
#include "app/config_files.h"

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

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
  throw ConfigError("no " + folder + " config '" + name_or_path + "' (looked for " + path.string() + "; known: " + known + ")");
}

ModelConfig load_model_config(const std::string& name) {
  const auto path = resolve_config("models", name);
  std::ifstream in(path);
  try {
    const auto json = nlohmann::json::parse(in);
    ModelConfig c;
    c.name = json.value("name", name);
    if (json.value("architecture", "llama") != "llama")
      throw ConfigError("only the llama architecture can be built as a runnable model");
    c.dim = json.at("dim").get<int64_t>();
    c.hidden_dim = json.at("hidden_dim").get<int64_t>();
    c.n_layers = json.at("n_layers").get<int64_t>();
    c.n_heads = json.at("n_heads").get<int64_t>();
    c.n_kv_heads = json.value("n_kv_heads", c.n_heads);
    c.vocab_size = json.at("vocab_size").get<int64_t>();
    c.context_length = json.at("context_length").get<int64_t>();
    c.rope_theta = json.value("rope_theta", 10000.0f);
    c.norm_eps = json.value("norm_eps", 1e-5f);
    c.tied_embeddings = json.value("tied_embeddings", true);
    c.validate();
    return c;
  } catch (const nlohmann::json::exception& e) {
    throw ConfigError(path.string() + ": " + e.what());
  } catch (const ConfigError& e) {
    throw ConfigError(path.string() + ": " + e.what());
  }
}

}  // namespace snapstream::app
