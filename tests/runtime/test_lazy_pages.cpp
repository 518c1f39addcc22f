// LazyPages reads as zeros until written and keeps what is written, made resident or moved;
// asked for huge pages, it aligns the buffer to the kernel's huge page size and advises the
// kernel to use them (the mapping's VmFlags in /proc/self/smaps carry "hg").
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

#include "runtime/lazy_pages.h"

using namespace snapstream::runtime;

namespace {

size_t reported_huge_page_bytes() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
  size_t value = 0;
  return in >> value ? value : size_t{0};
}

// The VmFlags line of the mapping in /proc/self/smaps that holds `address`, empty if none does.
std::string vm_flags_of(const void* address) {
  const auto at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-' && line.find(' ') > line.find('-')) {
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return {};
}

}  // namespace

TEST_CASE("lazy pages read as zeros, keep what is written, and move", "[runtime][lazy_pages]") {
  const auto pages = GENERATE(PageSize::Small, PageSize::Huge);
  const size_t bytes = 5 * (size_t{1} << 20) + 123;
  LazyPages buffer(bytes, pages);
  REQUIRE(buffer.size() == bytes);
  REQUIRE(buffer.data() != nullptr);
  CHECK(std::all_of(buffer.data(), buffer.data() + bytes, [](std::byte b) { return b == std::byte{0}; }));
  buffer.data()[0] = std::byte{7};
  buffer.data()[bytes - 1] = std::byte{9};
  buffer.make_resident();  // keeps what was written, and the zeros
  CHECK(buffer.data()[0] == std::byte{7});
  CHECK(std::all_of(buffer.data() + 1, buffer.data() + bytes - 1, [](std::byte b) { return b == std::byte{0}; }));
  LazyPages moved(std::move(buffer));
  CHECK(buffer.empty());
  CHECK(buffer.data() == nullptr);
  REQUIRE(moved.size() == bytes);
  CHECK(moved.data()[0] == std::byte{7});
  CHECK(moved.data()[bytes - 1] == std::byte{9});
  LazyPages assigned;
  assigned = std::move(moved);
  CHECK(moved.empty());
  CHECK(assigned.data()[bytes - 1] == std::byte{9});
  CHECK(LazyPages(0, pages).empty());
}

TEST_CASE("lazy pages asked for huge pages are aligned to them and advised", "[runtime][lazy_pages]") {
  const size_t huge = reported_huge_page_bytes();
  if (huge == 0) {
    WARN("this kernel reports no transparent huge pages");
    return;
  }
  LazyPages buffer(3 * huge, PageSize::Huge);
  CHECK(reinterpret_cast<uintptr_t>(buffer.data()) % huge == 0);
  const std::string flags = vm_flags_of(buffer.data());
  INFO(flags);
  CHECK(flags.find(" hg") != std::string::npos);
  // Small pages are not advised: the flag is this buffer's, not every mapping's.
  LazyPages small(3 * huge, PageSize::Small);
  CHECK(vm_flags_of(small.data()).find(" hg") == std::string::npos);
}
