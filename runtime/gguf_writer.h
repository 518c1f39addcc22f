// Writes GGUF v3 files: metadata in insertion order, tensor infos, then aligned tensor data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/gguf_value.h"

namespace snapstream::runtime {

class GgufWriter {
 public:
  // Fills exactly `bytes` bytes of one tensor's data when the file is written.
  using TensorFill = std::function<void(std::byte* out, uint64_t bytes)>;

  explicit GgufWriter(uint32_t alignment = kGgufDefaultAlignment);

  void add_metadata(std::string key, GgufValue value);
  // dims[0] is the innermost dimension (a row of a [rows][cols] matrix has dims {cols, rows}).
  void add_tensor(std::string name, std::vector<int64_t> dims, uint32_t type_code, TensorFill fill);

  // Writes the file; throws Error if it cannot be written or a tensor is malformed.
  void write(const std::string& path) const;

 private:
  struct PendingTensor {
    std::string name;
    std::vector<int64_t> dims;
    uint32_t type_code;
    uint64_t bytes;
    TensorFill fill;
  };
  uint32_t alignment_;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<PendingTensor> tensors_;
};

}  // namespace snapstream::runtime
