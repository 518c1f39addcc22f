// Large zero-filled buffers whose memory the kernel provides page by page on first write, so a
// part never written (another rank's share of an arena, the history of prompts longer than any
// yet seen) costs address space only, not resident memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace snapstream::runtime {

// `bytes` rounded up to a whole cache line, where copies packed into one buffer start.
inline int64_t cache_line_aligned(int64_t bytes) { return (bytes + 63) / 64 * 64; }

class LazyPages {
 public:
  LazyPages() = default;
  // Throws ConfigError when the system cannot reserve `bytes`.
  explicit LazyPages(size_t bytes);
  ~LazyPages();
  LazyPages(LazyPages&& other) noexcept;
  LazyPages& operator=(LazyPages&& other) noexcept;
  LazyPages(const LazyPages&) = delete;
  LazyPages& operator=(const LazyPages&) = delete;

  // Page-aligned; reads as zeros until written.
  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  std::byte* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace snapstream::runtime
