// Speculative decoding priced per accepted token: a draft model proposes k tokens, one decode
// step each, and the target checks all k+1 positions in one verify step; a round yields the
// accepted prefix of the draft plus the target's own next token.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/model_shape.h"

namespace snapstream::dataflow_sim {

struct SpeculativeSpec {
  graph::ModelShape draft;
  int64_t draft_tokens = 0;  // k, proposed per round
  // a_i: the chance that draft position i is accepted once positions 1..i-1 were. One value
  // applies to every position; otherwise one per position (k values).
  std::vector<double> acceptance;
};

// Throws SimulationError for k < 1 or acceptances outside [0, 1] or of the wrong count.
void validate_acceptance(const SpeculativeSpec& spec);

// validate_acceptance, and throws SimulationError for a draft whose vocabulary differs from the
// target's (the target could not check its tokens).
void validate_speculative(const SpeculativeSpec& spec, const graph::ModelShape& target);

// The acceptance of draft position i (1-based) under `spec`.
double acceptance_at(const SpeculativeSpec& spec, int64_t position);

// Tokens one round yields on average: 1 + sum over j of a_1 * ... * a_j (the target's own
// token always counts; position j counts only when every earlier one was accepted).
double expected_tokens_per_round(const SpeculativeSpec& spec);

}  // namespace snapstream::dataflow_sim
