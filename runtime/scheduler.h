// The scheduling policy of an engine step, kept apart from the engine so it can be tested alone.
//
// Policy (decode first): every running sequence decodes one token each step, so admitting new
// work never stalls streams already running. Then prefill, within the step's prompt-token
// budget:
//   1. the prompt being prefilled in chunks, if any, runs its next chunk;
//   2. waiting requests are admitted in arrival order while a slot is free and the budget
//      lasts, each running its first chunk (a short prompt is one chunk).
// The first prefill of a step ignores the budget, so a chunk longer than the budget still runs.
// Only one prompt at a time may need several chunks (it holds the one prompt history); a
// second one waits, and so does everything that arrived after it, to keep arrival order.
#pragma once

#include <cstdint>
#include <span>

namespace snapstream::runtime {

// A waiting request as the admission rule sees it.
struct WaitingPrompt {
  int64_t first_chunk = 0;  // prompt tokens its first prefill chunk takes
  bool chunked = false;     // it needs more than one chunk
};

// How many of the waiting requests (oldest first) to admit this step. `spent` counts the prompt
// tokens this step has prefilled already (step 1 above); `chunking` tells whether a chunked
// prompt is still in progress after it.
int64_t plan_admissions(int64_t free_slots, std::span<const WaitingPrompt> waiting, int64_t prefill_token_budget,
                        int64_t spent, bool chunking);

}  // namespace snapstream::runtime
