// Every way a model file can be broken gives a ModelFileError naming the file, never a crash
// or an out-of-bounds read (the sanitizer builds run these too).
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>

#include "runtime/errors.h"
#include "runtime/gguf_file.h"
#include "runtime/model.h"
#include "runtime/synthetic_model.h"
#include "tests/support/test_models.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {

std::vector<char> read_all(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_all(const std::filesystem::path& path, const std::vector<char>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

template <typename T>
void put(std::vector<char>& bytes, size_t offset, T value) {
  std::memcpy(bytes.data() + offset, &value, sizeof value);
}

// Where a tensor's info record starts after its name: n_dims, dims, type, offset follow.
size_t tensor_info_offset(const std::vector<char>& bytes, const std::string& name) {
  const std::string needle = std::string("\0\0\0\0\0\0\0", 7) + name;  // high bytes of the u64 length, then the name
  const auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  REQUIRE(it != bytes.end());
  return static_cast<size_t>(it - bytes.begin()) + needle.size();
}

void expect_model_error(const std::filesystem::path& path, const std::string& fragment, const std::string& tokenizer = "") {
  INFO("file " << path << ", expecting '" << fragment << "'");
  try {
    load_model(path.string(), tokenizer);
    FAIL("the file loaded without an error");
  } catch (const ModelFileError& e) {
    const std::string message = e.what();
    INFO("message: " << message);
    CHECK(message.find(path.string()) != std::string::npos);
    CHECK(message.find(fragment) != std::string::npos);
    CHECK(message.find('\n') == std::string::npos);
  }
}

struct Fixture {
  test::TempDir dir;
  std::filesystem::path good = dir / "good.gguf";
  std::vector<char> bytes;
  Fixture() {
    graph::ModelShape c = test::tiny_model_shape();
    c.layers = 1;
    c.vocab = 270;
    write_synthetic_model({c, kernels::DType::F32, 1}, good.string());
    bytes = read_all(good);
  }
  std::filesystem::path variant(const std::string& name, const std::vector<char>& content) {
    const auto path = dir / name;
    write_all(path, content);
    return path;
  }
};

}  // namespace

TEST_CASE("the unmodified fixture loads", "[errors]") {
  Fixture f;
  CHECK(load_model(f.good.string())->shape.vocab == 270);
}

TEST_CASE("truncated GGUF files fail cleanly at every cut", "[errors]") {
  Fixture f;
  const std::vector<size_t> cuts = {1, 3, 4, 7, 12, 20, 23, 24, 40, 200, 1000, 5000, f.bytes.size() / 2, f.bytes.size() - 1};
  for (size_t cut : cuts) {
    const auto path = f.variant("cut.gguf", {f.bytes.begin(), f.bytes.begin() + static_cast<std::ptrdiff_t>(cut)});
    INFO("cut at " << cut);
    CHECK_THROWS_AS(load_model(path.string()), ModelFileError);
  }
  expect_model_error(f.variant("empty.gguf", {}), "empty");
}

TEST_CASE("GGUF header corruption is reported", "[errors]") {
  Fixture f;
  auto bytes = f.bytes;
  bytes[0] = 'X';  // no longer GGUF, and not a llama2.c checkpoint either
  expect_model_error(f.variant("magic.gguf", bytes), "not a GGUF file");

  bytes = f.bytes;
  put<uint32_t>(bytes, 4, 99);
  expect_model_error(f.variant("version.gguf", bytes), "unsupported GGUF version 99");

  bytes = f.bytes;
  put<uint64_t>(bytes, 8, uint64_t{1} << 60);
  expect_model_error(f.variant("tensors.gguf", bytes), "tensor count");

  bytes = f.bytes;
  put<uint64_t>(bytes, 16, uint64_t{1} << 61);
  expect_model_error(f.variant("kv.gguf", bytes), "metadata count");

  bytes = f.bytes;
  put<uint64_t>(bytes, 24, uint64_t{1} << 40);  // the first key's length
  expect_model_error(f.variant("key.gguf", bytes), "metadata key has length");
}

TEST_CASE("corrupt tensor records are reported", "[errors]") {
  Fixture f;
  const size_t info = tensor_info_offset(f.bytes, "blk.0.attn_q.weight");
  // Layout after the name: n_dims u32, dims u64 x2, type u32, offset u64.
  auto bytes = f.bytes;
  put<uint32_t>(bytes, info, 9);
  expect_model_error(f.variant("ndims.gguf", bytes), "dimensions (1 to 4 allowed)");

  bytes = f.bytes;
  put<uint64_t>(bytes, info + 4, uint64_t{1} << 50);
  expect_model_error(f.variant("dim.gguf", bytes), "invalid dimension");

  bytes = f.bytes;
  put<uint64_t>(bytes, info + 4, 0);
  expect_model_error(f.variant("zero.gguf", bytes), "invalid dimension");

  bytes = f.bytes;
  put<uint64_t>(bytes, info + 12, uint64_t{1} << 30);
  expect_model_error(f.variant("big.gguf", bytes), "extends past the end");

  bytes = f.bytes;
  put<uint32_t>(bytes, info + 20, 77);
  expect_model_error(f.variant("dtype.gguf", bytes), "unknown type code 77");

  bytes = f.bytes;
  put<uint32_t>(bytes, info + 20, 3);  // Q4_1: a real format this engine cannot compute with
  expect_model_error(f.variant("q4.gguf", bytes), "cannot compute with");
  expect_model_error(f.variant("q4.gguf", bytes), "Q4_0, Q5_0, Q8_0, Q4_K, Q5_K, Q6_K");

  bytes = f.bytes;
  put<uint64_t>(bytes, info + 24, uint64_t{1} << 40);
  expect_model_error(f.variant("offset.gguf", bytes), "extends past the end");

  bytes = f.bytes;
  put<uint64_t>(bytes, info + 24, 8);
  expect_model_error(f.variant("align.gguf", bytes), "not a multiple of the alignment");
}

namespace {
// The bytes with the string value `key` = `from` replaced by `to`, of the same length.
std::vector<char> with_string_value(std::vector<char> bytes, const std::string& key, const std::string& from, const std::string& to) {
  REQUIRE(from.size() == to.size());
  const std::string needle = key + std::string(1, '\x08') + std::string(3, '\0') + static_cast<char>(from.size()) +
                             std::string(7, '\0') + from;  // type 8 (string), then the u64 length and the text
  const auto it = std::search(bytes.begin(), bytes.end(), needle.begin(), needle.end());
  REQUIRE(it != bytes.end());
  std::copy(to.begin(), to.end(), it + static_cast<std::ptrdiff_t>(needle.size() - from.size()));
  return bytes;
}
}  // namespace

TEST_CASE("an unsupported architecture or tokenizer is refused with what is supported", "[errors]") {
  Fixture f;
  const auto gemma = f.variant("gemma.gguf", with_string_value(f.bytes, "general.architecture", "llama", "gemma"));
  expect_model_error(gemma, "architecture 'gemma' is not supported (supported: llama, qwen2");
  const auto rwkv = f.variant("rwkv.gguf", with_string_value(f.bytes, "tokenizer.ggml.model", "llama", "rwkv5"));
  expect_model_error(rwkv, "tokenizer model 'rwkv5' is not supported (supported: llama for SentencePiece, gpt2");
}

TEST_CASE("a llama2.c header with the most negative vocabulary size is refused, not negated", "[errors]") {
  // Found by fuzz_gguf_model: -INT32_MIN overflowed while looking for tokINT.bin beside it.
  test::TempDir dir;
  std::vector<char> bytes(28, 0);
  put<int32_t>(bytes, 20, INT32_MIN);
  const auto path = dir / "model.bin";
  write_all(path, bytes);
  expect_model_error(path, "needs its tokenizer");
}

TEST_CASE("llama2.c checkpoints and tokenizers with bad sizes are reported", "[errors]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  test::TempDir dir;
  const auto checkpoint = read_all(*models / "stories260K.bin");
  const auto tokenizer = (*models / "tok512.bin").string();

  auto path = dir / "cut.bin";
  write_all(path, {checkpoint.begin(), checkpoint.end() - 100});
  expect_model_error(path, "does not match", tokenizer);

  auto bytes = checkpoint;
  put<int32_t>(bytes, 0, -64);
  write_all(path, bytes);
  expect_model_error(path, "dim = -64", tokenizer);

  bytes = checkpoint;
  put<int32_t>(bytes, 8, 1 << 30);  // layers
  write_all(path, bytes);
  expect_model_error(path, "n_layers", tokenizer);

  write_all(path, {checkpoint.begin(), checkpoint.begin() + 10});
  expect_model_error(path, "truncated", tokenizer);

  const auto tok = read_all(tokenizer);
  const auto tok_path = dir / "tok.bin";
  write_all(tok_path, {tok.begin(), tok.end() - 7});
  try {
    load_model((*models / "stories260K.bin").string(), tok_path.string());
    FAIL("a truncated tokenizer loaded");
  } catch (const ModelFileError& e) {
    CHECK(std::string(e.what()).find(tok_path.string()) != std::string::npos);
  }
}
