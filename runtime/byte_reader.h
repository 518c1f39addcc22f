// A bounds-checked little-endian cursor over a byte span; every read checks what is left.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include "runtime/errors.h"

namespace snapstream::runtime {

class ByteReader {
 public:
  ByteReader(std::span<const std::byte> bytes, std::string path) : bytes_(bytes), path_(std::move(path)) {}

  size_t offset() const { return offset_; }
  size_t remaining() const { return bytes_.size() - offset_; }
  const std::string& path() const { return path_; }

  template <typename T>
  T read(const char* what) {
    static_assert(std::is_trivially_copyable_v<T>);
    require(sizeof(T), what);
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }

  // A length-prefixed (u64) string of at most max_length bytes.
  std::string read_string(const char* what, uint64_t max_length) {
    const auto length = read<uint64_t>(what);
    if (length > max_length) fail(std::string(what) + " has length " + std::to_string(length) + ", over the limit of " + std::to_string(max_length));
    require(length, what);
    std::string text(reinterpret_cast<const char*>(bytes_.data() + offset_), static_cast<size_t>(length));
    offset_ += static_cast<size_t>(length);
    return text;
  }

  std::span<const std::byte> read_bytes(uint64_t count, const char* what) {
    require(count, what);
    auto view = bytes_.subspan(offset_, static_cast<size_t>(count));
    offset_ += static_cast<size_t>(count);
    return view;
  }

  [[noreturn]] void fail(const std::string& problem) const {
    throw ModelFileError(path_, problem + " (at byte " + std::to_string(offset_) + ")");
  }

 private:
  void require(uint64_t count, const char* what) const {
    if (count > remaining())
      fail(std::string("file is truncated: ") + what + " needs " + std::to_string(count) + " bytes, " +
           std::to_string(remaining()) + " left");
  }

  std::span<const std::byte> bytes_;
  std::string path_;
  size_t offset_ = 0;
};

}  // namespace snapstream::runtime
