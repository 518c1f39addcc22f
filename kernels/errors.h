// The error kernels throw when a caller passes arguments that break a kernel's contract.
#pragma once

#include <concepts>
#include <stdexcept>
#include <string>

namespace snapstream::kernels {

class KernelArgumentError : public std::invalid_argument {
 public:
  explicit KernelArgumentError(const std::string& message) : std::invalid_argument(message) {}
};

// Throws KernelArgumentError("<kernel>: <what>").
[[noreturn]] inline void fail(const char* kernel, const std::string& what) {
  throw KernelArgumentError(std::string(kernel) + ": " + what);
}

// Throws KernelArgumentError("<kernel>: <what>") when `ok` is false. Checks run on every call of
// a kernel, per token and layer, so a message is only turned into a string once a check fails:
// pass a literal, or a callable that builds a message with numbers in it.
inline void require(bool ok, const char* kernel, const char* what) {
  if (!ok) [[unlikely]] fail(kernel, what);
}
inline void require(bool ok, const char* kernel, const std::string& what) {
  if (!ok) [[unlikely]] fail(kernel, what);
}
template <std::invocable Describe>
void require(bool ok, const char* kernel, Describe&& describe) {
  if (!ok) [[unlikely]] fail(kernel, describe());
}

}  // namespace snapstream::kernels
