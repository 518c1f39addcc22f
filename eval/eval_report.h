// The outputs of `snapstream eval` for continuation and streams: a table on stdout, results.csv,
// report.md and PNG plots (retrieval tasks: eval/task_report.h).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "eval/eval_run.h"
#include "eval/stream_eval.h"

namespace snapstream::eval {

std::string eval_table(const std::vector<EvalResult>& results);
std::string eval_csv(const std::vector<EvalResult>& results);

struct EvalSetting {
  std::string model;
  std::string texts;         // where the documents came from
  int64_t documents = 0;
  int64_t dropped_short = 0;
  EvalPlan plan;
  std::string command;       // the command line that regenerates the report
};

// Writes results.csv, report.md, nll_gap.png and agreement.png into `dir`.
void write_eval_report(const std::filesystem::path& dir, const EvalSetting& setting, const std::vector<EvalResult>& results);

// What a stream report says of its run.
struct StreamSetting {
  std::string model;
  std::string task;      // the stream's text and length
  std::string haystack;  // where the text came from
  int64_t instances = 0;  // streams
  std::string command;
};

// Streaming: stream.csv (one line per cache and window), report.md and nll_by_position.png (a
// line per cache) into `dir`; `setting.task` names the stream's text and length.
void write_stream_report(const std::filesystem::path& dir, const StreamSetting& setting, const std::vector<StreamWindow>& windows);

}  // namespace snapstream::eval
