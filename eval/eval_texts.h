// The documents `snapstream eval` measures on: a user's JSONL texts, or stories the model
// writes itself with the full cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/thread_pool.h"
#include "runtime/generator.h"
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

// One story the model samples from BOS with the full cache at temperature 1: at most
// `max_tokens` tokens after BOS, ending early where the model ends it.
runtime::GenerationResult sample_story(const runtime::Model& model, kernels::ThreadPool& pool, int64_t max_tokens, uint64_t seed);

struct HaystackTexts {
  std::vector<std::string> texts;
  std::string source;  // where they came from, for reports
};

// A retrieval haystack: the "text" of every line of the JSONL file at `path` when one is given,
// else `stories` stories of 128 tokens sampled from `sampler` (named `sampler_name` in the
// source) as generate_eval_texts does (BOS left out). Throws InvalidRequestError
// "FILE:LINE: ..." for a malformed line.
HaystackTexts haystack_texts(const runtime::Model& sampler, const std::string& sampler_name, kernels::ThreadPool& pool,
                             const std::string& path, int64_t stories, uint64_t seed);

}  // namespace snapstream::eval
