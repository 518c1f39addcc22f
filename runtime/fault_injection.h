// Test-only faults: make one engine step fail on purpose, so tests can drive the error paths a
// healthy engine never takes. Only builds configured with SNAPSTREAM_FAULT_INJECTION=ON read the
// switch; in every other build a fault is never injected.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace snapstream::runtime {

// Where the fault strikes: the decode of one step (its running requests end with an error and
// the engine carries on) or the engine's step itself (the engine stops, as after a real fault).
enum class FaultSite { Decode, Engine };

// Strikes once: at engine step `step` (counted from 0), or at the first later step that reaches
// its site (a step without running sequences decodes nothing).
struct InjectedFault {
  FaultSite site = FaultSite::Decode;
  int64_t step = 0;
};

// What an injected fault throws.
class InjectedFaultError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The name of the environment variable that sets a fault: "decode:STEP" or "engine:STEP".
inline constexpr std::string_view kFaultVariable = "SNAPSTREAM_INJECT_FAULT";

// Parses "decode:STEP" or "engine:STEP"; throws ConfigError for anything else.
InjectedFault parse_injected_fault(std::string_view text);

// The fault the environment asks for; none when the variable is unset or the build has no
// fault injection (a warning is logged when the variable is set there).
std::optional<InjectedFault> injected_fault_from_environment();

// Throws InjectedFaultError when `fault` is due at `site` in `step`, and clears it.
void strike_if_due(std::optional<InjectedFault>& fault, FaultSite site, int64_t step);

}  // namespace snapstream::runtime
