// A read-only memory mapping of a whole file, so tensors can be used where they lie.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace snapstream::runtime {

class MappedFile {
 public:
  // Throws ModelFileError when the file cannot be opened or is empty.
  explicit MappedFile(std::string path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  std::span<const std::byte> bytes() const { return {data_, size_}; }
  size_t size() const { return size_; }
  // Lets the kernel drop every page read so far from this process's resident memory; a page
  // read again loads again from the page cache or the file. The contents never change.
  void release_resident_pages() const;

 private:
  std::string path_;
  const std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace snapstream::runtime
