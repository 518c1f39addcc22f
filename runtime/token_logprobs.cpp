// Log-softmax in double, so that log-probabilities of unlikely tokens keep their precision.
#include "runtime/token_logprobs.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

namespace snapstream::runtime {

namespace {

// log sum exp(logits), shifted by the largest logit so no exponential overflows.
double log_total(std::span<const float> logits) {
  const double peak = *std::max_element(logits.begin(), logits.end());
  double total = 0.0;
  for (const float l : logits) total += std::exp(static_cast<double>(l) - peak);
  return peak + std::log(total);
}

}  // namespace

double token_logprob(std::span<const float> logits, int32_t token) {
  return static_cast<double>(logits[static_cast<size_t>(token)]) - log_total(logits);
}

TokenEvent token_event(std::span<const float> logits, int32_t chosen, int64_t top) {
  const double total = log_total(logits);
  auto logprob = [&](int32_t id) { return static_cast<float>(logits[static_cast<size_t>(id)] - total); };

  TokenEvent event{chosen, logprob(chosen), {}, {}};
  const auto count = static_cast<size_t>(std::clamp<int64_t>(top, 0, static_cast<int64_t>(logits.size())));
  if (count == 0) return event;
  std::vector<int32_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(count), ids.end(), [&](int32_t a, int32_t b) {
    return logits[static_cast<size_t>(a)] > logits[static_cast<size_t>(b)] ||
           (logits[static_cast<size_t>(a)] == logits[static_cast<size_t>(b)] && a < b);
  });
  for (size_t i = 0; i < count; ++i) event.top.push_back({ids[i], logprob(ids[i])});
  return event;
}

}  // namespace snapstream::runtime
