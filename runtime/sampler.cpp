// Sampling uses splitmix64 rather than std:: distributions, whose output differs between
// standard libraries; the same seed must give the same tokens on every build.
#include "runtime/sampler.h"

#include <algorithm>
#include <cmath>

#include "kernels/argmax.h"
#include "runtime/errors.h"

namespace snapstream::runtime {

void SamplingParams::validate() const {
  if (!std::isfinite(temperature) || temperature < 0.0f)
    throw InvalidRequestError("temperature must be a finite number >= 0, got " + std::to_string(temperature));
  if (top_k < 0) throw InvalidRequestError("top_k must be >= 0 (0 disables it), got " + std::to_string(top_k));
  if (!std::isfinite(top_p) || top_p <= 0.0f || top_p > 1.0f)
    throw InvalidRequestError("top_p must be in (0, 1], got " + std::to_string(top_p));
  if (!std::isfinite(min_p) || min_p < 0.0f || min_p > 1.0f)
    throw InvalidRequestError("min_p must be in [0, 1], got " + std::to_string(min_p));
  if (!std::isfinite(repetition_penalty) || repetition_penalty <= 0.0f)
    throw InvalidRequestError("repetition_penalty must be a finite number > 0 (1 disables it), got " +
                              std::to_string(repetition_penalty));
  for (const float penalty : {frequency_penalty, presence_penalty})
    if (!std::isfinite(penalty) || penalty < -2.0f || penalty > 2.0f)
      throw InvalidRequestError("frequency and presence penalties must be within [-2, 2], got " + std::to_string(penalty));
  for (const auto& [token, bias] : logit_bias) {
    if (token < 0) throw InvalidRequestError("a logit bias names token " + std::to_string(token) + "; token ids are >= 0");
    if (!std::isfinite(bias) || bias < -100.0f || bias > 100.0f)
      throw InvalidRequestError("a logit bias must be within [-100, 100], got " + std::to_string(bias));
  }
}

namespace {
uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
constexpr uint64_t kGoldenGamma = 0x9E3779B97F4A7C15ull;
}  // namespace

uint64_t choice_seed(uint64_t seed, int64_t choice) {
  return choice == 0 ? seed : mix(seed ^ mix(static_cast<uint64_t>(choice) * kGoldenGamma));
}

Sampler::Sampler(const SamplingParams& params, std::span<const int32_t> prompt) : params_(params), state_(params.seed) {
  params_.validate();
  if (params_.repetition_penalty != 1.0f) repeated_.insert(prompt.begin(), prompt.end());
}

double Sampler::next_uniform() {
  state_ += kGoldenGamma;
  return static_cast<double>(mix(state_) >> 11) * 0x1.0p-53;
}

std::span<const float> Sampler::adjusted(std::span<const float> logits) {
  const bool penalised = params_.frequency_penalty != 0.0f || params_.presence_penalty != 0.0f;
  const bool repetition = params_.repetition_penalty != 1.0f;
  if (!penalised && !repetition && params_.logit_bias.empty()) return logits;
  adjusted_.assign(logits.begin(), logits.end());
  for (const auto& [token, bias] : params_.logit_bias) {
    if (static_cast<size_t>(token) >= adjusted_.size())
      throw InvalidRequestError("a logit bias names token " + std::to_string(token) + ", beyond the vocabulary of " +
                                std::to_string(adjusted_.size()));
    adjusted_[static_cast<size_t>(token)] += bias;
  }
  for (const int32_t token : repeated_) {
    if (token < 0 || static_cast<size_t>(token) >= adjusted_.size())
      throw InvalidRequestError("the prompt holds token " + std::to_string(token) + ", outside the vocabulary of " +
                                std::to_string(adjusted_.size()));
    float& logit = adjusted_[static_cast<size_t>(token)];
    logit = logit > 0.0f ? logit / params_.repetition_penalty : logit * params_.repetition_penalty;
  }
  for (const auto& [token, times] : returned_)
    adjusted_[static_cast<size_t>(token)] -= params_.frequency_penalty * static_cast<float>(times) + params_.presence_penalty;
  return adjusted_;
}

int32_t Sampler::sample(std::span<const float> logits) {
  const int32_t token = pick(adjusted(logits));
  if (params_.frequency_penalty != 0.0f || params_.presence_penalty != 0.0f) ++returned_[token];
  if (params_.repetition_penalty != 1.0f) repeated_.insert(token);
  return token;
}

int32_t Sampler::pick(std::span<const float> logits) {
  const auto n = static_cast<int64_t>(logits.size());
  if (params_.temperature == 0.0f) return static_cast<int32_t>(kernels::argmax(logits.data(), n));

  candidates_.resize(logits.size());
  for (int64_t i = 0; i < n; ++i) candidates_[static_cast<size_t>(i)] = {logits[static_cast<size_t>(i)], static_cast<int32_t>(i)};
  // Highest logit first; equal logits keep id order, so the cut is deterministic.
  auto by_logit = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
  size_t kept = candidates_.size();
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < kept) {
    kept = static_cast<size_t>(params_.top_k);
    std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(kept), candidates_.end(), by_logit);
  } else {
    std::sort(candidates_.begin(), candidates_.end(), by_logit);
  }
  candidates_.resize(kept);

  // Softmax of logit / temperature over the kept candidates, in double for a stable cut.
  std::vector<double> probabilities(kept);
  const double max_logit = candidates_[0].first;
  double total = 0.0;
  for (size_t i = 0; i < kept; ++i) {
    probabilities[i] = std::exp((candidates_[i].first - max_logit) / params_.temperature);
    total += probabilities[i];
  }
  size_t nucleus = kept;
  // The likeliest candidate's weight is exp(0) = 1, so min_p is the cut itself. The kept
  // candidates are sorted, so this cut and top-p's are both a prefix, and their order is moot.
  if (params_.min_p > 0.0f)
    nucleus = static_cast<size_t>(std::partition_point(probabilities.begin(), probabilities.end(),
                                                       [&](double p) { return p >= params_.min_p; }) -
                                  probabilities.begin());
  if (params_.top_p < 1.0f) {
    double cumulative = 0.0;
    for (size_t i = 0; i < kept; ++i) {
      cumulative += probabilities[i] / total;
      if (cumulative >= params_.top_p) {
        nucleus = std::min(nucleus, i + 1);
        break;
      }
    }
  }
  double nucleus_total = 0.0;
  for (size_t i = 0; i < nucleus; ++i) nucleus_total += probabilities[i];
  const double target = next_uniform() * nucleus_total;
  double cumulative = 0.0;
  for (size_t i = 0; i < nucleus; ++i) {
    cumulative += probabilities[i];
    if (target < cumulative) return candidates_[i].second;
  }
  return candidates_[nucleus - 1].second;
}

}  // namespace snapstream::runtime
