// LazyPages as an anonymous private mapping: the kernel's zero pages until written.
#include "runtime/lazy_pages.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "runtime/errors.h"

namespace snapstream::runtime {

LazyPages::LazyPages(size_t bytes) : size_(bytes) {
  if (bytes == 0) return;
  void* pages = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (pages == MAP_FAILED)
    throw ConfigError("cannot reserve " + std::to_string(bytes) + " bytes of memory: " + std::strerror(errno));
  data_ = static_cast<std::byte*>(pages);
}

LazyPages::~LazyPages() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

LazyPages::LazyPages(LazyPages&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

LazyPages& LazyPages::operator=(LazyPages&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

}  // namespace snapstream::runtime
