// Prompt checks, with messages that give the numbers.
#include "runtime/prompt_check.h"

#include <string>

#include "runtime/errors.h"

namespace snapstream::runtime {

void check_prompt(std::span<const int32_t> prompt_ids, int64_t context_length, const Tokenizer& tokenizer) {
  const auto length = static_cast<int64_t>(prompt_ids.size());
  if (length == 0) throw InvalidRequestError("the prompt has no tokens");
  if (length >= context_length)
    throw ContextLengthError("the prompt has " + std::to_string(length) + " tokens; the model's context holds " +
                             std::to_string(context_length) + ", leaving no room to generate");
  tokenizer.check_ids(prompt_ids);
}

}  // namespace snapstream::runtime
