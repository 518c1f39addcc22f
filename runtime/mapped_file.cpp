// POSIX mmap of a model file; pages load lazily and are shared with the page cache.
#include "runtime/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <spdlog/spdlog.h>

#include "runtime/errors.h"

namespace snapstream::runtime {

MappedFile::MappedFile(std::string path) : path_(std::move(path)) {
  const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ModelFileError(path_, std::string("cannot open: ") + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw ModelFileError(path_, "not a regular file");
  }
  size_ = static_cast<size_t>(info.st_size);
  if (size_ == 0) {
    ::close(fd);
    throw ModelFileError(path_, "file is empty");
  }
  void* mapping = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int map_errno = errno;
  ::close(fd);
  if (mapping == MAP_FAILED) throw ModelFileError(path_, std::string("cannot map: ") + std::strerror(map_errno));
  data_ = static_cast<const std::byte*>(mapping);
}

void MappedFile::release_resident_pages() const {
  // Only advice: a kernel that declines leaves more resident, never anything wrong.
  if (::madvise(const_cast<std::byte*>(data_), size_, MADV_DONTNEED) != 0)
    spdlog::debug("{}: madvise(MADV_DONTNEED) declined: {}", path_, std::strerror(errno));
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<std::byte*>(data_), size_);
}

}  // namespace snapstream::runtime
