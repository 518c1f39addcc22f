// GGUF write -> read round trips: metadata of every value type, tensors of every dtype, and
// whole synthetic models whose quantised forward passes track the f32 one.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <memory>

#include "kernels/dequantize.h"
#include "kernels/quantize.h"
#include "runtime/generator.h"
#include "runtime/gguf_file.h"
#include "runtime/gguf_writer.h"
#include "runtime/graph_runner.h"
#include "runtime/synthetic_model.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;
using kernels::DType;


TEST_CASE("GGUF metadata of every type survives a round trip", "[gguf]") {
  test::TempDir dir;
  GgufWriter writer(64);
  using T = GgufValueType;
  writer.add_metadata("u8", GgufValue::unsigned_int(T::UInt8, 200));
  writer.add_metadata("i8", GgufValue::signed_int(T::Int8, -100));
  writer.add_metadata("u16", GgufValue::unsigned_int(T::UInt16, 60000));
  writer.add_metadata("i16", GgufValue::signed_int(T::Int16, -30000));
  writer.add_metadata("u32", GgufValue::unsigned_int(T::UInt32, 4000000000u));
  writer.add_metadata("i32", GgufValue::signed_int(T::Int32, -2000000000));
  writer.add_metadata("u64", GgufValue::unsigned_int(T::UInt64, 1ull << 60));
  writer.add_metadata("i64", GgufValue::signed_int(T::Int64, -(1ll << 60)));
  writer.add_metadata("f32", GgufValue::floating(T::Float32, 0.5));
  writer.add_metadata("f64", GgufValue::floating(T::Float64, 1e-300));
  writer.add_metadata("bool", GgufValue::boolean(true));
  writer.add_metadata("string", GgufValue::string("h\xC3\xA9llo"));
  writer.add_metadata("ints", GgufValue::array(T::Int32, {GgufValue::signed_int(T::Int32, 1), GgufValue::signed_int(T::Int32, -2)}));
  writer.add_metadata("nested", GgufValue::array(T::Array, {GgufValue::array(T::String, {GgufValue::string("x")})}));
  writer.add_tensor("t", {4}, 0, [](std::byte* out, uint64_t) {
    const float values[4] = {1, 2, 3, 4};
    std::memcpy(out, values, sizeof values);
  });
  writer.write((dir / "m.gguf").string());

  const GgufFile file(std::make_shared<const MappedFile>((dir / "m.gguf").string()));
  CHECK(file.version() == 3);
  CHECK(file.alignment() == 64);
  CHECK(file.data_offset() % 64 == 0);
  CHECK(*file.find("u8")->as_uint() == 200);
  CHECK(*file.find("i8")->as_int() == -100);
  CHECK(*file.find("u16")->as_uint() == 60000);
  CHECK(*file.find("i16")->as_int() == -30000);
  CHECK(*file.find("u32")->as_uint() == 4000000000u);
  CHECK(*file.find("i32")->as_int() == -2000000000);
  CHECK(*file.find("u64")->as_uint() == 1ull << 60);
  CHECK(*file.find("i64")->as_int() == -(1ll << 60));
  CHECK(*file.find("f32")->as_double() == 0.5);
  CHECK(*file.find("f64")->as_double() == 1e-300);
  CHECK(*file.find("bool")->as_bool());
  CHECK(*file.find("string")->as_string() == "h\xC3\xA9llo");
  CHECK(file.find("i32")->type() == T::Int32);
  const auto& ints = *file.find("ints")->as_array();
  REQUIRE(ints.size() == 2);
  CHECK(*ints[1].as_int() == -2);
  CHECK(*(*file.find("nested")->as_array())[0].as_array()->at(0).as_string() == "x");
  const GgufTensor* t = file.find_tensor("t");
  REQUIRE(t != nullptr);
  float values[4];
  std::memcpy(values, t->data, sizeof values);
  CHECK(values[3] == 4.0f);
}

TEST_CASE("GGUF tensors of each dtype read back as written", "[gguf]") {
  const DType dtype = GENERATE(DType::F32, DType::F16, DType::BF16, DType::Q8_0);
  test::TempDir dir;
  const int64_t rows = 3, cols = 64;
  std::vector<float> values(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::cos(static_cast<float>(i)) * 3.0f;
  std::vector<std::byte> packed(static_cast<size_t>(rows * kernels::row_bytes(dtype, cols)));
  for (int64_t r = 0; r < rows; ++r)
    kernels::quantize_row(dtype, values.data() + r * cols, cols, packed.data() + r * kernels::row_bytes(dtype, cols));
  GgufWriter writer;
  writer.add_tensor("pad", {3}, 0, [](std::byte* out, uint64_t bytes) { std::memset(out, 0, bytes); });  // forces padding
  writer.add_tensor("w", {cols, rows}, ggml_type_info(dtype).code,
                    [&](std::byte* out, uint64_t bytes) { std::memcpy(out, packed.data(), bytes); });
  writer.write((dir / "t.gguf").string());

  const GgufFile file(std::make_shared<const MappedFile>((dir / "t.gguf").string()));
  const GgufTensor* w = file.find_tensor("w");
  REQUIRE(w != nullptr);
  CHECK(w->dims == std::vector<int64_t>{cols, rows});
  CHECK(w->type->dtype == dtype);
  REQUIRE(w->bytes == packed.size());
  CHECK(std::memcmp(w->data, packed.data(), packed.size()) == 0);
  CHECK(w->offset % 32 == 0);
}

TEST_CASE("synthetic models load in every dtype and agree with the f32 one", "[gguf][model]") {
  test::TempDir dir;
  kernels::ThreadPool pool(2);
  const std::vector<int32_t> prompt = {1, 300 - 5, 280, 290, 270, 261};
  auto last_logits = [&](DType dtype) {
    SyntheticModelOptions options{test::tiny_model_shape(), dtype, 11};
    const auto path = dir / (std::string(kernels::dtype_name(dtype)) + ".gguf");
    write_synthetic_model(options, path.string());
    const auto model = load_model(path.string());
    CHECK(model->format == "gguf");
    CHECK(model->shape.kv_heads == 2);
    CHECK_FALSE(model->shape.tied_embeddings);
    CHECK(model->tokenizer.vocab_size() == 300);
    CHECK(model->weights.layers[1].w_down.dtype == dtype);
    SnapStreamConfig full;
    full.full_cache = true;
    SlotKvCache cache(model->shape, full.resolved(model->shape.context_length), 1);
    GraphRunner runner(*model, pool, cache);
    std::vector<float> logits(300);
    runner.prefill(prompt, 0, logits.data());
    return logits;
  };
  const auto reference = last_logits(DType::F32);
  float scale = 0.0f;
  for (float v : reference) scale = std::max(scale, std::fabs(v));
  REQUIRE(scale > 0.0f);
  for (DType dtype : {DType::F16, DType::BF16, DType::Q8_0}) {
    const auto logits = last_logits(dtype);
    float worst = 0.0f;
    for (size_t i = 0; i < logits.size(); ++i) worst = std::max(worst, std::fabs(logits[i] - reference[i]));
    INFO(kernels::dtype_name(dtype) << ": largest logit difference " << worst << " of scale " << scale);
    CHECK(worst < 0.05f * scale);
  }
}

TEST_CASE("prefill in one block equals feeding the prompt token by token", "[model]") {
  test::TempDir dir;
  write_synthetic_model({test::tiny_model_shape(), DType::F32, 5}, (dir / "m.gguf").string());
  const auto model = load_model((dir / "m.gguf").string());
  kernels::ThreadPool pool(2);
  SnapStreamConfig full;
  full.full_cache = true;
  full.kv_dtype = DType::F32;  // prefill attends to unrounded keys; the steps must read the same
  SlotKvCache cache(model->shape, full.resolved(model->shape.context_length), 2);
  GraphRunner runner(*model, pool, cache);
  const std::vector<int32_t> prompt = {1, 290, 271, 299, 262, 280, 264, 277, 283};
  std::vector<float> block(300), step(300);
  runner.prefill(prompt, 0, block.data());
  runner.prefill({prompt.data(), 1}, 1, step.data());
  for (size_t i = 1; i < prompt.size(); ++i) {
    const DecodeInput input[1] = {{prompt[i], 1}};
    runner.decode(input, step.data());
  }
  for (size_t i = 0; i < block.size(); ++i) REQUIRE(block[i] == Approx(step[i]).margin(1e-5));
}
