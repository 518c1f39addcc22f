// Unbounded streaming (StreamingLLM's question): token streams longer than the model's context
// are teacher-forced through decode steps under each cache, and the NLL is reported per window
// of positions. The full cache and original positions stop at the context; a bounded cache with
// re-indexed positions goes on.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "eval/eval_run.h"

namespace snapstream::eval {

// Stories the model samples from BOS (temperature 1, seeds seed, seed+1, ...), each with its
// BOS, joined until `length` tokens: the text the model was trained on, past any one context.
std::vector<int32_t> sample_story_stream(const runtime::Model& model, kernels::ThreadPool& pool, int64_t length, uint64_t seed);

struct StreamWindow {
  EvalRow row;           // the cache; "full" for the full cache, "story" for it restarted at every BOS
  int64_t begin = 0;     // positions [begin, end) of the window
  int64_t end = 0;
  int64_t tokens = 0;    // tokens scored in it, over every stream
  double nll = 0;        // mean NLL per token
  std::vector<double> stream_nll;  // each stream's mean NLL per token in the window, in stream order
};

// Prefills each stream's first `prompt_length` tokens, then feeds the true tokens one decode step
// at a time (`slots` streams together), scoring each next token, until the streams end or the cache
// reaches the context (full cache, original positions). A "story" row empties its slot at every
// BOS after the prompt and goes on to the end: each token is scored given its own story alone,
// the reference for caches that stream past the context (the stories fit it). One result per
// row and window of `window` positions that holds scored tokens.
std::vector<StreamWindow> run_stream_eval(const runtime::Model& model, kernels::ThreadPool& pool, const std::vector<EvalRow>& rows,
                                          const std::vector<std::vector<int32_t>>& streams, int64_t prompt_length, int64_t window,
                                          int64_t slots, const std::function<void(int64_t, int64_t)>& progress = {});

}  // namespace snapstream::eval
