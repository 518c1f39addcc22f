// argmax with a strict comparison so ties resolve to the earliest index.
#include "kernels/argmax.h"

#include "kernels/errors.h"

namespace snapstream::kernels {

int64_t argmax(const float* x, int64_t n) {
  require(x != nullptr && n > 0, "argmax", "empty row");
  int64_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

}  // namespace snapstream::kernels
