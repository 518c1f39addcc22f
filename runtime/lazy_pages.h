// Large zero-filled buffers whose memory the kernel provides page by page on first write, so a
// part never written (another rank's share of an arena, the history of prompts longer than any
// yet seen) costs address space only, not resident memory.
#pragma once

#include <cstddef>
#include <cstdint>

namespace snapstream::runtime {

// `bytes` rounded up to a whole cache line, where copies packed into one buffer start.
inline int64_t cache_line_aligned(int64_t bytes) { return (bytes + 63) / 64 * 64; }

// How the kernel backs a buffer's pages. Huge: transparent huge pages where the system offers
// them (a buffer read from end to end every step, weights or cache entries spread over it, then
// costs few TLB misses), whole huge pages becoming resident at a time; small pages otherwise.
enum class PageSize : uint8_t { Small, Huge };

class LazyPages {
 public:
  LazyPages() = default;
  // Throws ConfigError when the system cannot reserve `bytes`.
  explicit LazyPages(size_t bytes, PageSize pages = PageSize::Small);
  ~LazyPages();
  LazyPages(LazyPages&& other) noexcept;
  LazyPages& operator=(LazyPages&& other) noexcept;
  LazyPages(const LazyPages&) = delete;
  LazyPages& operator=(const LazyPages&) = delete;

  // Writes to every page, so all of them are resident from now on: a machine short of memory
  // then fails here, at start-up, rather than at a page's first use much later.
  void make_resident();

  // Page-aligned (huge-page-aligned when asked for huge pages); reads as zeros until written.
  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  void release();

  std::byte* data_ = nullptr;
  size_t size_ = 0;
  // The whole mapping: more than size_ when data_ was aligned within it.
  std::byte* mapping_ = nullptr;
  size_t mapping_size_ = 0;
};

}  // namespace snapstream::runtime
