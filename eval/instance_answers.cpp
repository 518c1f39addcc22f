// Per-instance retrieval answers as JSON lines.
#include "eval/instance_answers.h"

#include <nlohmann/json.hpp>

namespace snapstream::eval {

std::string instance_answers_jsonl(const std::vector<EvalResult>& results) {
  std::string out;
  for (const EvalResult& result : results) {
    const EvalRow& row = result.row;
    for (size_t i = 0; i < result.answers.size(); ++i) {
      const InstanceAnswer& answer = result.answers[i];
      std::string held;  // "10110111": layer by layer, each KV group
      for (const char h : answer.values_held) held += h ? '1' : '0';
      const nlohmann::ordered_json line = {
          {"task", result.task},          {"context", result.context},     {"policy", row.policy},
          {"budget", row.budget},         {"ring", row.ring},              {"window", row.window},
          {"pool_kernel", row.pool_kernel}, {"positions", row.positions},  {"instance", i},
          {"expected", answer.expected},  {"generated", answer.generated}, {"right", answer.right},
          {"values_held", held}};
      // Generated text may hold bytes that are not UTF-8 (a model's byte tokens): replace them
      // rather than refuse the whole file.
      out += line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
      out += '\n';
    }
  }
  return out;
}

}  // namespace snapstream::eval
