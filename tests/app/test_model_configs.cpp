// Every model config under configs/models parses: the Llama-family ones as runnable shapes,
// the others with a clear refusal, and each names its weight and KV dtypes.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "runtime/errors.h"
#include "app/config_files.h"

using namespace snapstream;

TEST_CASE("model configs parse and name their dtypes", "[configs]") {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(app::config_root() / "models")) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().stem().string();
    INFO(name);
    std::ifstream in(entry.path());
    const auto json = nlohmann::json::parse(in);
    CHECK(json.at("name") == name);
    for (const char* key : {"weight_dtype", "kv_dtype"}) {
      const std::string dtype = json.at(key);
      CHECK((dtype == "f32" || dtype == "f16" || dtype == "bf16" || dtype == "q8_0" || dtype == "fp8"));
    }
    if (json.value("architecture", "llama") == "llama")
      CHECK_NOTHROW(app::load_model_config(name));
    else
      CHECK_THROWS_AS(app::load_model_config(name), ConfigError);
    ++checked;
  }
  CHECK(checked >= 8);
}

TEST_CASE("Llama 3.1 8B holds 128 KiB of BF16 KV per token", "[configs]") {
  const ModelConfig c = app::load_model_config("llama-3.1-8b");
  const int64_t bf16_bytes = 2;
  CHECK(2 * c.n_layers * c.kv_dim() * bf16_bytes == 128 * 1024);
}
