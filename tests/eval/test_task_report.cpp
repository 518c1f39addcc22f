// The retrieval report's account of lost answers: the full cache's right answers split into
// those SnapStream keeps and loses, with each layer's and KV group's share holding the values,
// checked against shares worked by hand.
#include <catch2/catch.hpp>

#include "eval/task_report.h"
#include "tests/support/test_paths.h"

using namespace snapstream;

namespace {

eval::InstanceAnswer answer(bool right, std::vector<char> held) { return {" 1234.", right ? " 1234." : " 9999.", right, std::move(held)}; }

}  // namespace

TEST_CASE("task report: where SnapStream's lost answers went, per layer and KV group", "[eval]") {
  eval::TaskSetting setting;
  setting.model = "m.gguf";
  setting.haystack = "hand-made";
  setting.command = "cmd";
  setting.kv_groups = 2;  // two layers of two groups: four caches
  setting.plan.contexts = {64};
  setting.plan.budgets = {"1/4"};
  setting.plan.instances = 5;
  setting.plan.rows.policies = {"full", "snapstream"};
  setting.plan.rows.windows = {32};
  setting.plan.rows.pool_kernels = {7};
  setting.plan.rows.positions = {"original"};

  eval::EvalResult full;
  full.task = "niah";
  full.context = 64;
  full.row = eval::full_cache_row(setting.plan.rows, 64);
  full.accuracy = 0.8;
  // Instance 4 the full cache gets wrong: it is left out of both groups below.
  for (int i = 0; i < 5; ++i) full.answers.push_back(answer(i != 4, {1, 1, 1, 1}));
  eval::EvalResult snap = full;
  snap.row.policy = "snapstream";
  snap.row.budget = 16;
  snap.row.ring = 8;
  snap.accuracy = 0.4;
  // Answered: 0 and 1; lost: 2 and 3. Layer 1 group 1 held the values for both answered and
  // neither lost (100% against 0%), the widest gap; layer 0 group 0 for all four.
  snap.answers = {answer(true, {1, 1, 0, 1}), answer(true, {1, 0, 1, 1}), answer(false, {1, 0, 0, 0}), answer(false, {1, 1, 1, 0}),
                  answer(true, {0, 0, 0, 0})};

  test::TempDir dir;
  eval::write_task_report(dir.path(), setting, {full, snap});
  const std::string report = test::read_text(dir.path() / "report.md");
  INFO(report);
  CHECK(report.find("## Where SnapStream's lost answers went") != std::string::npos);
  CHECK(report.find("- niah at 64 tokens, C = 16: of 4 answers the full cache gets right, SnapStream loses 2; layer 1 KV group 1 "
                    "held the answer's values for 100.0% of those answered and 0.0% of those lost.") != std::string::npos);
  CHECK(report.find("| task | context | C | full cache's right answers | layer 0 group 0 | layer 0 group 1 | layer 1 group 0 | "
                    "layer 1 group 1 |") != std::string::npos);
  CHECK(report.find("| niah | 64 | 16 | answered (2) | 100% | 50% | 50% | 100% |") != std::string::npos);
  CHECK(report.find("| niah | 64 | 16 | lost (2) | 100% | 50% | 50% | 0% |") != std::string::npos);
  const std::string answers = test::read_text(dir.path() / "answers.jsonl");
  CHECK(answers.find("\"values_held\":\"1101\"") != std::string::npos);
}
