// The documents `snapstream eval` measures on: a user's JSONL texts, or stories the model
// writes itself with the full cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/thread_pool.h"
#include "runtime/model.h"

namespace snapstream::eval {

struct EvalTexts {
  std::vector<std::vector<int32_t>> documents;  // each exactly `length` tokens, BOS first
  int64_t dropped_short = 0;                    // texts or samples shorter than `length`
};

// Lines {"text": "..."}; each is tokenized with BOS, kept when it has at least `length` tokens
// and cut to them. Throws InvalidRequestError "FILE:LINE: ..." for a malformed line.
EvalTexts read_eval_texts(const std::string& path, const runtime::Tokenizer& tokenizer, int64_t length);

// `count` stories sampled from BOS with the full cache at temperature 1, seeds seed, seed+1,
// ...; samples that end before `length` tokens are dropped and more are drawn, at most 50 per
// document asked for. Throws InvalidRequestError when too few are long enough.
EvalTexts generate_eval_texts(const runtime::Model& model, kernels::ThreadPool& pool, int64_t count, int64_t length, uint64_t seed);

// The "text" of every line of a JSONL file, whole (a retrieval task's haystack). Throws
// InvalidRequestError "FILE:LINE: ..." for a malformed line.
std::vector<std::string> read_text_lines(const std::string& path);

// generate_eval_texts' stories as text, BOS left out.
std::vector<std::string> sample_story_texts(const runtime::Model& model, kernels::ThreadPool& pool, int64_t count, int64_t length,
                                            uint64_t seed);

}  // namespace snapstream::eval
