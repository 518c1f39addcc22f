// GGUF serialisation; general.alignment is always written so readers agree on the padding.
#include "runtime/gguf_writer.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "runtime/errors.h"

namespace snapstream::runtime {
namespace {

class Output {
 public:
  explicit Output(const std::string& path) : path_(path), stream_(path, std::ios::binary | std::ios::trunc) {
    if (!stream_) throw Error("cannot write " + path + ": " + std::strerror(errno));
  }
  template <typename T>
  void put(T value) {
    bytes(&value, sizeof value);
  }
  void bytes(const void* data, size_t count) {
    stream_.write(static_cast<const char*>(data), static_cast<std::streamsize>(count));
    if (!stream_) throw Error("write to " + path_ + " failed (disk full?)");
    written_ += count;
  }
  void text(const std::string& s) {
    put<uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void pad_to(uint64_t alignment) {
    static const char zeros[256] = {};
    while (written_ % alignment != 0) bytes(zeros, std::min<uint64_t>(alignment - written_ % alignment, sizeof zeros));
  }
  uint64_t written() const { return written_; }
  void close() {
    stream_.close();
    if (!stream_) throw Error("closing " + path_ + " failed");
  }

 private:
  std::string path_;
  std::ofstream stream_;
  uint64_t written_ = 0;
};

void write_value(Output& out, const GgufValue& value) {
  switch (value.type()) {
    case GgufValueType::UInt8: out.put(static_cast<uint8_t>(*value.as_uint())); break;
    case GgufValueType::Int8: out.put(static_cast<int8_t>(*value.as_int())); break;
    case GgufValueType::UInt16: out.put(static_cast<uint16_t>(*value.as_uint())); break;
    case GgufValueType::Int16: out.put(static_cast<int16_t>(*value.as_int())); break;
    case GgufValueType::UInt32: out.put(static_cast<uint32_t>(*value.as_uint())); break;
    case GgufValueType::Int32: out.put(static_cast<int32_t>(*value.as_int())); break;
    case GgufValueType::UInt64: out.put(*value.as_uint()); break;
    case GgufValueType::Int64: out.put(*value.as_int()); break;
    case GgufValueType::Float32: out.put(static_cast<float>(*value.as_double())); break;
    case GgufValueType::Float64: out.put(*value.as_double()); break;
    case GgufValueType::Bool: out.put(static_cast<uint8_t>(*value.as_bool() ? 1 : 0)); break;
    case GgufValueType::String: out.text(*value.as_string()); break;
    case GgufValueType::Array:
      out.put(static_cast<uint32_t>(value.element_type()));
      out.put<uint64_t>(value.as_array()->size());
      for (const auto& element : *value.as_array()) write_value(out, element);
      break;
  }
}

}  // namespace

GgufWriter::GgufWriter(uint32_t alignment) : alignment_(alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) throw Error("GGUF alignment must be a power of two");
  metadata_.emplace_back("general.alignment", GgufValue::unsigned_int(GgufValueType::UInt32, alignment));
}

void GgufWriter::add_metadata(std::string key, GgufValue value) {
  for (auto& [existing, stored] : metadata_)
    if (existing == key) {
      stored = std::move(value);
      return;
    }
  metadata_.emplace_back(std::move(key), std::move(value));
}

void GgufWriter::add_tensor(std::string name, std::vector<int64_t> dims, uint32_t type_code, TensorFill fill) {
  const GgmlTypeInfo* type = ggml_type_info(type_code);
  if (type == nullptr) throw Error("tensor '" + name + "': unknown ggml type " + std::to_string(type_code));
  if (dims.empty() || dims.size() > 4) throw Error("tensor '" + name + "' must have 1 to 4 dimensions");
  if (name.size() > 64) throw Error("tensor name '" + name + "' is longer than GGUF's 64-byte limit");
  uint64_t elements = 1;
  for (int64_t d : dims) {
    if (d <= 0) throw Error("tensor '" + name + "' has a non-positive dimension");
    elements *= static_cast<uint64_t>(d);
  }
  if (dims[0] % type->block_size != 0) throw Error("tensor '" + name + "' row is not a whole number of blocks");
  const uint64_t bytes = elements / static_cast<uint64_t>(type->block_size) * static_cast<uint64_t>(type->block_bytes);
  tensors_.push_back({std::move(name), std::move(dims), type_code, bytes, std::move(fill)});
}

void GgufWriter::write(const std::string& path) const {
  Output out(path);
  out.put(kGgufMagic);
  out.put<uint32_t>(3);
  out.put<uint64_t>(tensors_.size());
  out.put<uint64_t>(metadata_.size());
  for (const auto& [key, value] : metadata_) {
    out.text(key);
    out.put(static_cast<uint32_t>(value.type()));
    write_value(out, value);
  }
  uint64_t offset = 0;
  for (const auto& tensor : tensors_) {
    out.text(tensor.name);
    out.put<uint32_t>(static_cast<uint32_t>(tensor.dims.size()));
    for (int64_t d : tensor.dims) out.put<uint64_t>(static_cast<uint64_t>(d));
    out.put(tensor.type_code);
    out.put(offset);
    offset += (tensor.bytes + alignment_ - 1) / alignment_ * alignment_;
  }
  out.pad_to(alignment_);
  std::vector<std::byte> buffer;
  for (const auto& tensor : tensors_) {
    buffer.assign(tensor.bytes, std::byte{0});
    tensor.fill(buffer.data(), tensor.bytes);
    out.bytes(buffer.data(), buffer.size());
    out.pad_to(alignment_);
  }
  out.close();
}

}  // namespace snapstream::runtime
