// The one check of a prompt before it is run, made by every way in: the engine, one-off
// generation, the graph runner and the API's request parsing.
#pragma once

#include <cstdint>
#include <span>

#include "runtime/tokenizer.h"

namespace snapstream::runtime {

// Throws InvalidRequestError for an empty prompt or an id outside the vocabulary, and
// ContextLengthError when the prompt leaves no room to generate in `context_length`.
void check_prompt(std::span<const int32_t> prompt_ids, int64_t context_length, const Tokenizer& tokenizer);

}  // namespace snapstream::runtime
