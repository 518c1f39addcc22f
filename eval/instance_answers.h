// answers.jsonl beside a retrieval report: every instance's expected and generated answer under
// every row, so a reader can see which questions a policy lost and what it said instead.
#pragma once

#include <string>
#include <vector>

#include "eval/eval_run.h"

namespace snapstream::eval {

// One JSON object per line and per (result, instance), results in order: the row's task,
// context, policy, C, R, window, pooling width and positions, then instance, expected,
// generated, right and values_held (per layer, each KV group: 1 where the cache held every token
// the answer copies, 0 where it dropped some).
std::string instance_answers_jsonl(const std::vector<EvalResult>& results);

}  // namespace snapstream::eval
