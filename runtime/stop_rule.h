// When a sequence stops: the rule shared by one-off generation and the batching engine.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/tokenizer.h"

namespace snapstream::runtime {

// Any of the vocabulary's end-of-generation tokens ends a sequence (EOS, EOT, <|im_end|>, ...).
inline bool is_end_token(const Tokenizer& tokenizer, int32_t token) { return tokenizer.ends_generation(token); }

// The most tokens a prompt may generate: what was asked, within what the context leaves unless
// the cache streams past the context (SlotKvCache::streams_past_context). The last generated
// token is never fed back, so it needs no position of its own.
inline int64_t generation_limit(int64_t requested, int64_t prompt_length, int64_t context_length, bool past_context) {
  return std::max<int64_t>(0, past_context ? requested : std::min(requested, context_length - prompt_length));
}

}  // namespace snapstream::runtime
