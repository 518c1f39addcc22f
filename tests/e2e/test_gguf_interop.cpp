// Files written by `snapstream make-model` read the same in an independent GGUF parser
// (@huggingface/gguf, run by node): metadata, tensor table and data offset all agree.
#include <catch2/catch.hpp>
#include <memory>
#include <nlohmann/json.hpp>

#include "runtime/gguf_file.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;

TEST_CASE("make-model output parses identically in an independent GGUF reader", "[e2e][gguf]") {
  const auto clients = test::node_clients_or_skip();
  if (!clients) return;
  const std::string dtype = GENERATE("f32", "f16", "bf16", "q8_0");
  test::TempDir dir;
  const auto path = (dir / "model.gguf").string();
  const auto made = test::run_command(test::snapstream_binary().string() + " make-model --shape tiny-test --dtype " + dtype +
                                      " --out " + path + " --log-level warn");
  REQUIRE(made.exit_code == 0);
  const auto dumped = test::run_command("node " + (*clients / "gguf_dump.mjs").string() + " " + path);
  INFO(dumped.err);
  REQUIRE(dumped.exit_code == 0);
  const auto theirs = nlohmann::json::parse(dumped.out);
  const GgufFile ours(std::make_shared<const MappedFile>(path));

  CHECK(theirs.at("data_offset").get<uint64_t>() == ours.data_offset());
  const auto& tensors = theirs.at("tensors");
  REQUIRE(tensors.size() == ours.tensors().size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    const GgufTensor& t = ours.tensors()[i];
    INFO(t.name);
    CHECK(tensors[i].at("name") == t.name);
    CHECK(tensors[i].at("dims").get<std::vector<int64_t>>() == t.dims);
    CHECK(tensors[i].at("type").get<uint32_t>() == t.type_code);
    CHECK(tensors[i].at("offset").get<uint64_t>() == t.offset);
  }
  const auto& metadata = theirs.at("metadata");
  for (const auto& [key, value] : ours.metadata()) {
    INFO(key);
    REQUIRE(metadata.contains(key));
    const auto& other = metadata.at(key);
    if (const auto* text = value.as_string()) {
      CHECK(other.get<std::string>() == *text);
    } else if (const auto* array = value.as_array()) {
      REQUIRE(other.size() == array->size());
      for (size_t i = 0; i < array->size(); ++i) {
        const GgufValue& element = (*array)[i];
        if (element.as_string()) REQUIRE(other[i].get<std::string>() == *element.as_string());
        else REQUIRE(other[i].get<double>() == *element.as_double());
      }
    } else if (const auto flag = value.as_bool()) {
      CHECK(other.get<bool>() == *flag);
    } else {
      CHECK(other.get<double>() == *value.as_double());
    }
  }
}
