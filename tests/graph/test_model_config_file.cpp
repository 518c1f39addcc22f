// The one reader of configs/models: every shipped config reads into a finalised shape, the
// Llama-family ones as shapes the CPU runs; bad configs are refused naming the file and the
// problem; and a model written from a config loads back with the very same shape.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>

#include "graph/errors.h"
#include "graph/model_config_file.h"
#include "runtime/model.h"
#include "runtime/synthetic_model.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {

std::filesystem::path write_config(const test::TempDir& dir, const std::string& name, const std::string& json) {
  const auto path = dir / (name + ".json");
  std::ofstream(path) << json;
  return path;
}

constexpr const char* kSmallLlama =
    R"({"dim": 64, "hidden_dim": 128, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "vocab_size": 300, "context_length": 64)";

}  // namespace

TEST_CASE("every shipped model config reads into a finalised shape with its dtypes", "[graph][configs]") {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(test::configs_dir() / "models")) {
    if (entry.path().extension() != ".json") continue;
    const std::string name = entry.path().stem().string();
    INFO(name);
    std::ifstream in(entry.path());
    const auto json = nlohmann::json::parse(in);
    for (const char* key : {"weight_dtype", "kv_dtype"}) CHECK(json.contains(key));
    const graph::ModelShape shape = graph::read_model_config(entry.path());
    CHECK(shape.name == name);
    CHECK(shape.context_length == json.at("context_length").get<int64_t>());
    const std::string architecture = json.value("architecture", "llama");
    CHECK(shape.runs_on_cpu() == (architecture != "deepseek"));
    if (shape.runs_on_cpu()) CHECK(shape.head_dim * shape.heads == json.value("head_dim", shape.dim / shape.heads) * shape.heads);
    CHECK(shape.attention_bias == (architecture == "qwen2"));
    ++checked;
  }
  CHECK(checked >= 8);
}

TEST_CASE("Llama 3.1 8B holds 128 KiB of BF16 KV per token", "[graph][configs]") {
  const graph::ModelShape c = graph::read_model_config(test::configs_dir() / "models" / "llama-3.1-8b.json");
  CHECK(c.weight_dtype == kernels::DType::BF16);
  CHECK(2 * c.layers * c.kv_dim() * kernels::row_bytes(c.kv_dtype, 1) == 128 * 1024);
}

TEST_CASE("a bad model config is refused naming the file and the problem", "[graph][configs]") {
  test::TempDir dir;
  const std::string small = kSmallLlama;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {small + R"(, "architecture": "mamba"})", "unknown architecture 'mamba'"},
      {small + R"(, "weight_dtype": "int3"})", "unknown dtype 'int3'"},
      {R"({"dim": 64, "n_layers": 2, "n_heads": 4, "vocab_size": 300, "context_length": 64})", "hidden_dim"},
      {R"({"dim": 60, "hidden_dim": 128, "n_layers": 2, "n_heads": 8, "vocab_size": 300, "context_length": 64})",
       "dim 60 is not divisible by n_heads 8"},
      {small + R"(, "n_layers": 0})", "n_layers = 0 is outside"},
      {R"({"dim": "wide"})", "type must be number"},
      {"not json", "parse error"},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    INFO(cases[i].first);
    const auto path = write_config(dir, "bad" + std::to_string(i), cases[i].first);
    CHECK_THROWS_AS(graph::read_model_config(path), graph::ShapeError);
    CHECK_THROWS_WITH(graph::read_model_config(path), Catch::StartsWith(path.string() + ": ") && Catch::Contains(cases[i].second));
  }
  CHECK_THROWS_WITH(graph::read_model_config(dir / "missing.json"), Catch::Contains("cannot open model config"));
}

TEST_CASE("a model written from a config loads back with the config's shape", "[graph][configs][model]") {
  test::TempDir dir;
  const auto path = write_config(dir, "small", std::string(kSmallLlama) + R"(, "rope_theta": 500000, "norm_eps": 1e-6,
                                                                            "tied_embeddings": false})");
  SyntheticModelOptions options;
  options.shape = graph::read_model_config(path);
  write_synthetic_model(options, (dir / "small.gguf").string());
  const graph::ModelShape& config = options.shape;
  const graph::ModelShape loaded = load_model((dir / "small.gguf").string())->shape;
  CHECK(loaded.dim == config.dim);
  CHECK(loaded.hidden_dim == config.hidden_dim);
  CHECK(loaded.layers == config.layers);
  CHECK(loaded.heads == config.heads);
  CHECK(loaded.kv_heads == config.kv_heads);
  CHECK(loaded.head_dim == config.head_dim);
  CHECK(loaded.vocab == config.vocab);
  CHECK(loaded.context_length == config.context_length);
  CHECK(loaded.rope_theta == config.rope_theta);
  CHECK(loaded.norm_eps == config.norm_eps);
  CHECK(loaded.tied_embeddings == config.tied_embeddings);
}
