// The decode-first admission policy.
#include <catch2/catch.hpp>
#include <vector>

#include "runtime/scheduler.h"

using snapstream::plan_admissions;

TEST_CASE("admissions stop at free slots and at the prefill budget", "[scheduler]") {
  const std::vector<int64_t> lengths = {100, 200, 300, 50};
  CHECK(plan_admissions(0, lengths, 10000) == 0);
  CHECK(plan_admissions(2, lengths, 10000) == 2);
  CHECK(plan_admissions(8, lengths, 10000) == 4);
  CHECK(plan_admissions(8, lengths, 300) == 2);   // 100 + 200 fit, + 300 would not
  CHECK(plan_admissions(8, lengths, 299) == 1);
  CHECK(plan_admissions(8, std::vector<int64_t>{5000}, 100) == 1);  // a long prompt still runs, alone
  CHECK(plan_admissions(8, std::vector<int64_t>{}, 100) == 0);
}
