// The outputs of `snapstream eval --task niah,multikey,...`: a table on stdout, results.csv,
// every instance's answer, and report.md with accuracy by task, policy and budget, what the
// numbers show, and a plot per task.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "eval/eval_run.h"
#include "eval/task_eval.h"

namespace snapstream::eval {

std::string task_table(const std::vector<EvalResult>& results);

// What a retrieval report says of its run.
struct TaskSetting {
  std::string model;
  std::string haystack;  // where the haystack text came from
  TaskPlan plan;
  std::string command;   // the command line that regenerates the report
  int64_t kv_groups = 1; // KV groups per layer of the model: how values_held is laid out
};

// Writes results.csv, answers.jsonl (eval/instance_answers.h), report.md and accuracy-TASK.png
// per task (accuracy against budget, a line per policy and context) into `dir`.
void write_task_report(const std::filesystem::path& dir, const TaskSetting& setting, const std::vector<EvalResult>& results);

}  // namespace snapstream::eval
