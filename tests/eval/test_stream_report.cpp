// The stream report's findings: each cache's change from positions 256-512 to the stream's last
// 512, with the standard error of the per-stream change, checked against numbers worked by hand.
#include <catch2/catch.hpp>

#include "eval/eval_report.h"
#include "tests/support/test_paths.h"

using namespace snapstream;

TEST_CASE("stream findings: the change over the stream with its standard error over streams", "[eval]") {
  eval::EvalRow row;
  row.policy = "snapstream";
  row.budget = 128;
  row.ring = 64;
  row.positions = "reindexed";
  // Two streams of 1024 positions: stream 0 goes from 1.0 to 1.1, stream 1 from 2.0 to 2.4.
  // Means 1.5 -> 1.75 (+16.7%); changes 0.1 and 0.4, their mean 0.25 with standard deviation
  // 0.2121 and standard error 0.15 = 10.0% of 1.5.
  const std::vector<eval::StreamWindow> windows = {{row, 0, 256, 384, 3.0, {2.5, 3.5}},
                                                   {row, 256, 512, 512, 1.5, {1.0, 2.0}},
                                                   {row, 512, 768, 512, 1.75, {1.1, 2.4}},
                                                   {row, 768, 1024, 512, 1.75, {1.1, 2.4}}};
  test::TempDir dir;
  eval::write_stream_report(dir.path(), {"m.gguf", "stream", "hand-made", 2, "cmd"}, windows);
  const std::string report = test::read_text(dir.path() / "report.md");
  INFO(report);
  CHECK(report.find("- snapstream-C128-reindexed: NLL 1.7500 over positions 512-1024 against 1.5000 over 256-512 "
                    "(+16.7% ± 10.0%, standard error over 2 streams).") != std::string::npos);
}
