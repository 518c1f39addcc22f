// The test-only fault switch: what it accepts, what it refuses, and that a fault strikes once.
#include <catch2/catch.hpp>

#include "runtime/errors.h"
#include "runtime/fault_injection.h"

using namespace snapstream::runtime;

TEST_CASE("fault switch values parse or are refused with the expected form", "[runtime][fault]") {
  const InjectedFault decode = parse_injected_fault("decode:7");
  CHECK(decode.site == FaultSite::Decode);
  CHECK(decode.step == 7);
  const InjectedFault engine = parse_injected_fault("engine:0");
  CHECK(engine.site == FaultSite::Engine);
  CHECK(engine.step == 0);
  for (const char* bad : {"", "decode", "decode:", "decode:-1", "decode:3x", "prefill:3", "engine: 3", "engine:99999999999999999999"})
    CHECK_THROWS_AS(parse_injected_fault(bad), ConfigError);
}

TEST_CASE("an injected fault strikes once, at its step or the first later one at its site", "[runtime][fault]") {
  std::optional<InjectedFault> fault = InjectedFault{FaultSite::Decode, 4};
  CHECK_NOTHROW(strike_if_due(fault, FaultSite::Decode, 3));
  CHECK_NOTHROW(strike_if_due(fault, FaultSite::Engine, 5));
  CHECK_THROWS_AS(strike_if_due(fault, FaultSite::Decode, 6), InjectedFaultError);
  CHECK_FALSE(fault.has_value());
  CHECK_NOTHROW(strike_if_due(fault, FaultSite::Decode, 7));
}
