// The error kernels throw when a caller passes arguments that break a kernel's contract.
#pragma once

#include <stdexcept>
#include <string>

namespace snapstream::kernels {

class KernelArgumentError : public std::invalid_argument {
 public:
  explicit KernelArgumentError(const std::string& message) : std::invalid_argument(message) {}
};

// Throws KernelArgumentError("<kernel>: <what>") when `ok` is false.
inline void require(bool ok, const char* kernel, const std::string& what) {
  if (!ok) throw KernelArgumentError(std::string(kernel) + ": " + what);
}

}  // namespace snapstream::kernels
