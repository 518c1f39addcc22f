// Reading the test-only fault switch and striking at the chosen step.
#include "runtime/fault_injection.h"

#include <spdlog/spdlog.h>

#include <charconv>
#include <cstdlib>

#include "runtime/errors.h"

namespace snapstream::runtime {

InjectedFault parse_injected_fault(std::string_view text) {
  const auto colon = text.find(':');
  const std::string usage = std::string(kFaultVariable) + " must be decode:STEP or engine:STEP, not '" + std::string(text) + "'";
  if (colon == std::string_view::npos) throw ConfigError(usage);
  InjectedFault fault;
  const auto site = text.substr(0, colon);
  if (site == "decode") {
    fault.site = FaultSite::Decode;
  } else if (site == "engine") {
    fault.site = FaultSite::Engine;
  } else {
    throw ConfigError(usage);
  }
  const auto digits = text.substr(colon + 1);
  const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), fault.step);
  if (digits.empty() || error != std::errc() || end != digits.data() + digits.size() || fault.step < 0) throw ConfigError(usage);
  return fault;
}

std::optional<InjectedFault> injected_fault_from_environment() {
  const char* value = std::getenv(std::string(kFaultVariable).c_str());
  if (value == nullptr) return std::nullopt;
#ifdef SNAPSTREAM_FAULT_INJECTION
  const InjectedFault fault = parse_injected_fault(value);
  spdlog::warn("fault injection: the {} of engine step {} will fail", fault.site == FaultSite::Decode ? "decode" : "step itself", fault.step);
  return fault;
#else
  spdlog::warn("{} is set, but this build has no fault injection (SNAPSTREAM_FAULT_INJECTION=OFF): ignored", kFaultVariable);
  return std::nullopt;
#endif
}

void strike_if_due(std::optional<InjectedFault>& fault, FaultSite site, int64_t step) {
  if (!fault || fault->site != site || step < fault->step) return;
  fault.reset();
  throw InjectedFaultError("injected fault at engine step " + std::to_string(step));
}

}  // namespace snapstream::runtime
