// The scheduling policy of an engine step, kept apart from the engine so it can be tested alone.
//
// Policy (decode first): every running sequence decodes one token each step, so admitting new
// work never stalls streams already running. Then waiting requests are admitted in arrival
// order while a slot is free and the step's prefill token budget lasts; the first admission
// of a step ignores the budget, so a prompt longer than the budget still runs.
#pragma once

#include <cstdint>
#include <span>

namespace snapstream {

// How many of the waiting requests (their prompt lengths, oldest first) to prefill this step.
int64_t plan_admissions(int64_t free_slots, std::span<const int64_t> waiting_prompt_lengths, int64_t prefill_token_budget);

}  // namespace snapstream
