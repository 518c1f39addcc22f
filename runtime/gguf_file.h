// A parsed, validated GGUF file (v2/v3): metadata, tensor table and in-place tensor data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "runtime/gguf_value.h"
#include "runtime/mapped_file.h"

namespace snapstream::runtime {

struct GgufTensor {
  std::string name;
  std::vector<int64_t> dims;  // dims[0] is the innermost (contiguous) dimension
  uint32_t type_code = 0;
  const GgmlTypeInfo* type = nullptr;
  uint64_t offset = 0;  // from the start of the tensor data section
  uint64_t bytes = 0;
  const std::byte* data = nullptr;

  int64_t elements() const;
};

class GgufFile {
 public:
  // Parses and validates everything before returning; throws ModelFileError naming the
  // file and the problem for any truncation, corruption or unsupported construct.
  explicit GgufFile(std::shared_ptr<const MappedFile> file);

  const std::string& path() const { return file_->path(); }
  const std::shared_ptr<const MappedFile>& mapping() const { return file_; }
  uint32_t version() const { return version_; }
  uint64_t alignment() const { return alignment_; }
  uint64_t data_offset() const { return data_offset_; }

  const std::vector<std::pair<std::string, GgufValue>>& metadata() const { return metadata_; }
  const GgufValue* find(const std::string& key) const;
  const std::vector<GgufTensor>& tensors() const { return tensors_; }
  const GgufTensor* find_tensor(const std::string& name) const;

 private:
  std::shared_ptr<const MappedFile> file_;
  uint32_t version_ = 0;
  uint64_t alignment_ = kGgufDefaultAlignment;
  uint64_t data_offset_ = 0;
  std::vector<std::pair<std::string, GgufValue>> metadata_;
  std::vector<GgufTensor> tensors_;
};

// True when the file starts with the GGUF magic.
bool has_gguf_magic(const MappedFile& file);

}  // namespace snapstream::runtime
