// A source-code prompt for the parity models' tensor-parallel tests.
#pragma once

#include <string>

namespace snapstream::test {

// Three times a short Python function: longer than the 32-entry caches those tests give plus
// the observation window, so SnapKV compacts it and decode overwrites the ring.
inline std::string repeated_function_prompt() {
  std::string code;
  for (int i = 0; i < 3; ++i) code += "def fibonacci(n):\n    if n < 2:\n        return n\n    return fibonacci(n - 1) + fibonacci(n - 2)\n";
  return code;
}

}  // namespace snapstream::test
