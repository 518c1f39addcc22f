// GGUF parsing. Counts and lengths read from the file are checked against the bytes that
// remain before anything is allocated, so a corrupt header fails fast instead of exhausting memory.
#include "runtime/gguf_file.h"

#include <unordered_set>

#include "runtime/byte_reader.h"

namespace snapstream::runtime {
namespace {

constexpr uint64_t kMaxKeyLength = 65535;
constexpr uint64_t kMaxTensorNameLength = 1024;
constexpr uint32_t kMaxDims = 4;
constexpr int kMaxArrayDepth = 8;
// Smallest encodings, used to bound counts by the bytes left.
constexpr uint64_t kMinKeyValueBytes = 8 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;

GgufValue read_value(ByteReader& in, GgufValueType type, int depth);

GgufValueType read_type(ByteReader& in, const char* what) {
  const auto code = in.read<uint32_t>(what);
  if (!gguf_value_type_known(code)) in.fail("unknown metadata value type " + std::to_string(code));
  return static_cast<GgufValueType>(code);
}

GgufValue read_array(ByteReader& in, int depth) {
  if (depth >= kMaxArrayDepth) in.fail("metadata arrays nested deeper than " + std::to_string(kMaxArrayDepth));
  const GgufValueType element_type = read_type(in, "array element type");
  const auto count = in.read<uint64_t>("array length");
  const uint64_t fixed = gguf_value_fixed_size(element_type);
  const uint64_t min_element = fixed != 0 ? fixed : (element_type == GgufValueType::String ? 8 : 12);
  if (count > in.remaining() / min_element)
    in.fail("array length " + std::to_string(count) + " is larger than the rest of the file can hold");
  GgufValue::Array elements;
  elements.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) elements.push_back(read_value(in, element_type, depth + 1));
  return GgufValue::array(element_type, std::move(elements));
}

GgufValue read_value(ByteReader& in, GgufValueType type, int depth) {
  switch (type) {
    case GgufValueType::UInt8: return GgufValue::unsigned_int(type, in.read<uint8_t>("u8 value"));
    case GgufValueType::Int8: return GgufValue::signed_int(type, in.read<int8_t>("i8 value"));
    case GgufValueType::UInt16: return GgufValue::unsigned_int(type, in.read<uint16_t>("u16 value"));
    case GgufValueType::Int16: return GgufValue::signed_int(type, in.read<int16_t>("i16 value"));
    case GgufValueType::UInt32: return GgufValue::unsigned_int(type, in.read<uint32_t>("u32 value"));
    case GgufValueType::Int32: return GgufValue::signed_int(type, in.read<int32_t>("i32 value"));
    case GgufValueType::UInt64: return GgufValue::unsigned_int(type, in.read<uint64_t>("u64 value"));
    case GgufValueType::Int64: return GgufValue::signed_int(type, in.read<int64_t>("i64 value"));
    case GgufValueType::Float32: return GgufValue::floating(type, in.read<float>("f32 value"));
    case GgufValueType::Float64: return GgufValue::floating(type, in.read<double>("f64 value"));
    case GgufValueType::Bool: {
      const auto byte = in.read<uint8_t>("bool value");
      if (byte > 1) in.fail("bool value " + std::to_string(byte) + " is neither 0 nor 1");
      return GgufValue::boolean(byte == 1);
    }
    case GgufValueType::String: return GgufValue::string(in.read_string("string value", in.remaining()));
    case GgufValueType::Array: return read_array(in, depth);
  }
  in.fail("unknown metadata value type");
}

// Multiplies non-negative sizes, failing instead of overflowing past 2^62.
uint64_t checked_multiply(ByteReader& in, uint64_t a, uint64_t b, const std::string& what) {
  constexpr uint64_t kLimit = uint64_t{1} << 62;
  if (a != 0 && b > kLimit / a) in.fail(what + " is too large");
  return a * b;
}

}  // namespace

int64_t GgufTensor::elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

bool has_gguf_magic(const MappedFile& file) {
  if (file.size() < 4) return false;
  uint32_t magic;
  std::memcpy(&magic, file.bytes().data(), 4);
  return magic == kGgufMagic;
}

GgufFile::GgufFile(std::shared_ptr<const MappedFile> file) : file_(std::move(file)) {
  ByteReader in(file_->bytes(), file_->path());
  if (in.read<uint32_t>("magic") != kGgufMagic) in.fail("not a GGUF file (wrong magic)");
  version_ = in.read<uint32_t>("version");
  if (version_ != 2 && version_ != 3)
    in.fail("unsupported GGUF version " + std::to_string(version_) + " (this reader supports versions 2 and 3)");
  const auto tensor_count = in.read<uint64_t>("tensor count");
  const auto kv_count = in.read<uint64_t>("metadata count");
  if (kv_count > in.remaining() / kMinKeyValueBytes)
    in.fail("metadata count " + std::to_string(kv_count) + " is larger than the file can hold");

  std::unordered_set<std::string> keys;
  metadata_.reserve(static_cast<size_t>(kv_count));
  for (uint64_t i = 0; i < kv_count; ++i) {
    std::string key = in.read_string("metadata key", kMaxKeyLength);
    if (!keys.insert(key).second) in.fail("duplicate metadata key '" + key + "'");
    const GgufValueType type = read_type(in, "metadata value type");
    metadata_.emplace_back(std::move(key), read_value(in, type, 0));
  }

  if (const GgufValue* align = find("general.alignment")) {
    const auto value = align->as_uint();
    if (align->type() != GgufValueType::UInt32 || !value || *value == 0 || (*value & (*value - 1)) != 0)
      in.fail("general.alignment must be a u32 power of two, got " + align->to_display());
    alignment_ = *value;
  }

  if (tensor_count > in.remaining() / kMinTensorInfoBytes)
    in.fail("tensor count " + std::to_string(tensor_count) + " is larger than the file can hold");
  std::unordered_set<std::string> names;
  tensors_.reserve(static_cast<size_t>(tensor_count));
  for (uint64_t i = 0; i < tensor_count; ++i) {
    GgufTensor tensor;
    tensor.name = in.read_string("tensor name", kMaxTensorNameLength);
    if (!names.insert(tensor.name).second) in.fail("duplicate tensor name '" + tensor.name + "'");
    const auto n_dims = in.read<uint32_t>("tensor dimension count");
    if (n_dims == 0 || n_dims > kMaxDims)
      in.fail("tensor '" + tensor.name + "' has " + std::to_string(n_dims) + " dimensions (1 to 4 allowed)");
    uint64_t elements = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      const auto dim = in.read<uint64_t>("tensor dimension");
      if (dim == 0 || dim > (uint64_t{1} << 40))
        in.fail("tensor '" + tensor.name + "' has an invalid dimension " + std::to_string(dim));
      elements = checked_multiply(in, elements, dim, "tensor '" + tensor.name + "' element count");
      tensor.dims.push_back(static_cast<int64_t>(dim));
    }
    tensor.type_code = in.read<uint32_t>("tensor type");
    tensor.type = ggml_type_info(tensor.type_code);
    if (tensor.type == nullptr)
      in.fail("tensor '" + tensor.name + "' has unknown type code " + std::to_string(tensor.type_code));
    if (tensor.dims[0] % tensor.type->block_size != 0)
      in.fail("tensor '" + tensor.name + "' row length " + std::to_string(tensor.dims[0]) + " is not a multiple of the " +
              std::string(tensor.type->name) + " block size " + std::to_string(tensor.type->block_size));
    tensor.bytes = checked_multiply(in, elements / static_cast<uint64_t>(tensor.type->block_size),
                                    static_cast<uint64_t>(tensor.type->block_bytes), "tensor '" + tensor.name + "' size");
    tensor.offset = in.read<uint64_t>("tensor offset");
    if (tensor.offset % alignment_ != 0)
      in.fail("tensor '" + tensor.name + "' offset " + std::to_string(tensor.offset) + " is not a multiple of the alignment " +
              std::to_string(alignment_));
    tensors_.push_back(std::move(tensor));
  }

  data_offset_ = (in.offset() + alignment_ - 1) / alignment_ * alignment_;
  const uint64_t size = file_->size();
  for (auto& tensor : tensors_) {
    if (data_offset_ > size || tensor.offset > size - data_offset_ || tensor.bytes > size - data_offset_ - tensor.offset)
      throw ModelFileError(path(), "tensor '" + tensor.name + "' (offset " + std::to_string(tensor.offset) + ", " +
                                       std::to_string(tensor.bytes) + " bytes) extends past the end of the file (" +
                                       std::to_string(size) + " bytes); the file is truncated or corrupt");
    tensor.data = file_->bytes().data() + data_offset_ + tensor.offset;
  }
}

const GgufValue* GgufFile::find(const std::string& key) const {
  for (const auto& [name, value] : metadata_)
    if (name == key) return &value;
  return nullptr;
}

const GgufTensor* GgufFile::find_tensor(const std::string& name) const {
  for (const auto& tensor : tensors_)
    if (tensor.name == name) return &tensor;
  return nullptr;
}

}  // namespace snapstream::runtime
