// The expected yield of a speculative round, and the checks a draft must pass.
#include "dataflow_sim/speculative.h"

#include <cmath>
#include <string>

#include "dataflow_sim/errors.h"

namespace snapstream::dataflow_sim {

void validate_acceptance(const SpeculativeSpec& spec) {
  if (spec.draft_tokens < 1) throw SimulationError("speculative decoding needs at least one draft token per round");
  const size_t given = spec.acceptance.size();
  if (given != 1 && given != static_cast<size_t>(spec.draft_tokens))
    throw SimulationError("give one acceptance rate, or one per draft token (" + std::to_string(spec.draft_tokens) + "), not " +
                          std::to_string(given));
  for (const double a : spec.acceptance)
    if (!std::isfinite(a) || a < 0 || a > 1) throw SimulationError("acceptance rates are probabilities in [0, 1]");
}

void validate_speculative(const SpeculativeSpec& spec, const graph::ModelShape& target) {
  validate_acceptance(spec);
  if (spec.draft.vocab != target.vocab)
    throw SimulationError("the draft " + spec.draft.name + " has a vocabulary of " + std::to_string(spec.draft.vocab) + ", " +
                          target.name + " one of " + std::to_string(target.vocab) + ": a draft must share the target's tokenizer");
}

double acceptance_at(const SpeculativeSpec& spec, int64_t position) {
  return spec.acceptance.size() == 1 ? spec.acceptance.front() : spec.acceptance.at(static_cast<size_t>(position - 1));
}

double expected_tokens_per_round(const SpeculativeSpec& spec) {
  double tokens = 1, reached = 1;
  for (int64_t j = 1; j <= spec.draft_tokens; ++j) {
    reached *= acceptance_at(spec, j);
    tokens += reached;
  }
  return tokens;
}

}  // namespace snapstream::dataflow_sim
