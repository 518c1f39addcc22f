// Wall time per kind of op over the steps an executor ran with a profile attached: what a step
// spends its time on, for `snapstream bench --profile`.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "graph/ir.h"

namespace snapstream::graph {

struct OpProfile {
  static constexpr size_t kKinds = static_cast<size_t>(OpKind::LoopedLayers) + 1;
  std::array<double, kKinds> seconds{};
  std::array<int64_t, kKinds> calls{};  // a group of matmuls sharing their input counts once

  void add(OpKind kind, double elapsed) {
    seconds[static_cast<size_t>(kind)] += elapsed;
    ++calls[static_cast<size_t>(kind)];
  }
  double total_seconds() const {
    double total = 0.0;
    for (const double s : seconds) total += s;
    return total;
  }
};

}  // namespace snapstream::graph
