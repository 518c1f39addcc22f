// Reading a JSONL file of prompts for `snapstream batch`, one request per line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/sampler.h"

namespace snapstream::app {

struct PromptLine {
  std::string prompt;
  int64_t max_tokens = 256;
  runtime::SamplingParams sampling;
  bool ignore_eos = false;
};

// Lines are {"prompt": ..., "max_tokens": ..., "temperature": ..., "top_k": ..., "top_p": ...,
// "seed": ..., "ignore_eos": ...}; only "prompt" is required and blank lines are skipped. Throws
// InvalidRequestError "FILE:LINE: problem" for the first bad line.
std::vector<PromptLine> read_prompt_file(const std::string& path);

}  // namespace snapstream::app
