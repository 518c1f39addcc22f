// The decode-first admission policy.
#include <catch2/catch.hpp>
#include <vector>

#include "runtime/scheduler.h"

using snapstream::runtime::plan_admissions;
using snapstream::runtime::WaitingPrompt;

TEST_CASE("admissions stop at free slots and at the prefill budget", "[scheduler]") {
  const std::vector<WaitingPrompt> prompts = {{100}, {200}, {300}, {50}};
  CHECK(plan_admissions(0, prompts, 10000, 0, false) == 0);
  CHECK(plan_admissions(2, prompts, 10000, 0, false) == 2);
  CHECK(plan_admissions(8, prompts, 10000, 0, false) == 4);
  CHECK(plan_admissions(8, prompts, 300, 0, false) == 2);  // 100 + 200 fit, + 300 would not
  CHECK(plan_admissions(8, prompts, 299, 0, false) == 1);
  CHECK(plan_admissions(8, std::vector<WaitingPrompt>{{5000}}, 100, 0, false) == 1);  // a long prompt still runs, alone
  CHECK(plan_admissions(8, std::vector<WaitingPrompt>{}, 100, 0, false) == 0);
}

TEST_CASE("a chunk in progress spends the budget first", "[scheduler]") {
  const std::vector<WaitingPrompt> prompts = {{100}, {200}};
  CHECK(plan_admissions(8, prompts, 2048, 2048, true) == 0);  // the chunk took the whole budget
  CHECK(plan_admissions(8, prompts, 2048, 1900, true) == 1);
  CHECK(plan_admissions(8, prompts, 2048, 1700, true) == 2);
}

TEST_CASE("one chunked prompt at a time, in arrival order", "[scheduler]") {
  const std::vector<WaitingPrompt> prompts = {{10}, {2048, true}, {10}, {2048, true}};
  CHECK(plan_admissions(8, prompts, 100000, 0, false) == 3);  // the second chunked prompt waits
  CHECK(plan_admissions(8, prompts, 100000, 0, true) == 1);   // one is in progress: stop at the next
  CHECK(plan_admissions(8, prompts, 1000, 0, false) == 1);    // the chunk would pass the budget
}
