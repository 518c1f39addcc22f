// The admission rule of the decode-first policy.
#include "runtime/scheduler.h"

namespace snapstream {

int64_t plan_admissions(int64_t free_slots, std::span<const int64_t> waiting_prompt_lengths, int64_t prefill_token_budget) {
  int64_t admitted = 0, spent = 0;
  for (const int64_t length : waiting_prompt_lengths) {
    if (admitted == free_slots) break;
    if (admitted > 0 && spent + length > prefill_token_budget) break;
    spent += length;
    ++admitted;
  }
  return admitted;
}

}  // namespace snapstream
