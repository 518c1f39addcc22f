// Log-probabilities of a sampled token and its most likely alternatives, for clients that ask.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/request_stream.h"

namespace snapstream::runtime {

// log softmax(logits)[token], computed in double.
double token_logprob(std::span<const float> logits, int32_t token);

// The event for `chosen` with its log-softmax value over `logits` and the `top` most likely
// tokens (ties to the lower id).
TokenEvent token_event(std::span<const float> logits, int32_t chosen, int64_t top);

}  // namespace snapstream::runtime
