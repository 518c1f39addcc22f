// The rows of an evaluation plan: defaults first, then SnapStream's ring-share variants, each
// ring resolved against its own budget; budgets and rings as fractions or positions.
#include <catch2/catch.hpp>

#include "eval/eval_run.h"
#include "runtime/errors.h"

using namespace snapstream;

TEST_CASE("eval plan: ring shares resolve per budget and add SnapStream rows after the defaults", "[eval]") {
  eval::EvalPlan plan;
  plan.budgets = {64, 32};
  plan.policies = {"snapstream", "streaming"};
  plan.rings = {"1/2", "1/4", "20"};
  plan.windows = {32};
  plan.pool_kernels = {7};
  plan.positions = {"original"};
  const auto rows = eval::plan_rows(plan);
  std::vector<std::tuple<std::string, int64_t, int64_t>> seen;
  for (const auto& row : rows) {
    seen.emplace_back(row.policy, row.budget, row.ring);
    CHECK(row.cache.ring == row.ring);
  }
  const std::vector<std::tuple<std::string, int64_t, int64_t>> expected = {
      {"snapstream", 64, 32}, {"snapstream", 32, 16}, {"streaming", 64, 60}, {"streaming", 32, 28},
      {"snapstream", 64, 16}, {"snapstream", 64, 20}, {"snapstream", 32, 8},  {"snapstream", 32, 20}};
  CHECK(seen == expected);

  CHECK(eval::resolve_budget("1/4", 1000) == 250);
  CHECK(eval::resolve_budget("96", 1000) == 96);
  for (const char* bad : {"1/0", "x", "1/4x", "-3", "0"})
    CHECK_THROWS_WITH(eval::resolve_budget(bad, 100), Catch::Contains("fractions (1/4) or numbers of positions (96), not '" + std::string(bad)));
  // A ring that leaves no room for the sink is refused when the cache is resolved.
  plan.rings = {"1/2", "64"};
  plan.budgets = {64};
  const auto too_big = eval::plan_rows(plan);
  CHECK_NOTHROW(too_big.front().cache.resolved(512));
  CHECK_THROWS_AS(too_big.back().cache.resolved(512), runtime::ConfigError);
}
