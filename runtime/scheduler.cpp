// The admission rule of the decode-first policy.
#include "runtime/scheduler.h"

namespace snapstream::runtime {

int64_t plan_admissions(int64_t free_slots, std::span<const WaitingPrompt> waiting, int64_t prefill_token_budget,
                        int64_t spent, bool chunking) {
  int64_t admitted = 0;
  for (const WaitingPrompt& prompt : waiting) {
    if (admitted == free_slots) break;
    if (prompt.chunked && chunking) break;
    if (spent > 0 && spent + prompt.first_chunk > prefill_token_budget) break;
    spent += prompt.first_chunk;
    chunking = chunking || prompt.chunked;
    ++admitted;
  }
  return admitted;
}

}  // namespace snapstream::runtime
