// LazyPages as an anonymous private mapping: the kernel's zero pages until written.
#include "runtime/lazy_pages.h"

#include <sys/mman.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "runtime/errors.h"

namespace snapstream::runtime {
namespace {

// The transparent huge page size the kernel reports, 0 where it has none.
size_t huge_page_bytes() {
  static const size_t bytes = [] {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
    size_t value = 0;
    return in >> value ? value : size_t{0};
  }();
  return bytes;
}

}  // namespace

LazyPages::LazyPages(size_t bytes, PageSize pages) : size_(bytes) {
  if (bytes == 0) return;
  // Huge pages back only whole, aligned huge pages of a mapping: reserve one more and align.
  const size_t huge = pages == PageSize::Huge && bytes >= huge_page_bytes() ? huge_page_bytes() : 0;
  mapping_size_ = bytes + huge;
  void* mapping = ::mmap(nullptr, mapping_size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED)
    throw ConfigError("cannot reserve " + std::to_string(bytes) + " bytes of memory: " + std::strerror(errno));
  mapping_ = static_cast<std::byte*>(mapping);
  data_ = mapping_;
  if (huge == 0) return;
  const auto address = reinterpret_cast<uintptr_t>(mapping_);
  data_ = mapping_ + (huge - address % huge) % huge;
  // Small pages still work: a kernel without transparent huge pages, or with them switched off.
  if (::madvise(data_, bytes, MADV_HUGEPAGE) != 0)
    spdlog::debug("no huge pages for a buffer of {} bytes: {}", bytes, std::strerror(errno));
}

void LazyPages::make_resident() {
  // One byte per small page, written back as read, so what the buffer holds stays.
  const auto small_page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  for (size_t at = 0; at < size_; at += small_page) {
    volatile std::byte* byte = data_ + at;
    *byte = *byte;
  }
}

void LazyPages::release() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_size_);
}

LazyPages::~LazyPages() { release(); }

LazyPages::LazyPages(LazyPages&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_size_(std::exchange(other.mapping_size_, 0)) {}

LazyPages& LazyPages::operator=(LazyPages&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_size_ = std::exchange(other.mapping_size_, 0);
  }
  return *this;
}

}  // namespace snapstream::runtime
