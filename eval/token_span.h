// A run of a prompt's token positions, shared by the task generator (where facts and answers
// sit) and the evaluator (which positions a cache must keep).
#pragma once

#include <cstdint>

namespace snapstream::eval {

// Tokens [begin, end) of a prompt (or of a prompt followed by its answer).
struct TokenSpan {
  int64_t begin = 0;
  int64_t end = 0;
};

}  // namespace snapstream::eval
