// SnapStream against a naive dense reference: on stories260K with a 320-token prompt and
// C = 128, every decode step's logits must equal those of plain attention restricted to the
// positions the cache should hold (sink, SnapKV's picks, the last R tokens), while the ring
// wraps several times, with original and with re-indexed positions. Also: with room for
// everything, SnapStream equals the full cache.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "kernels/cpu/dot.h"
#include "kernels/dequantize.h"
#include "runtime/generator.h"
#include "runtime/graph_runner.h"
#include "runtime/model.h"
#include "runtime/slot_kv_cache.h"
#include "runtime/stop_rule.h"
#include "tests/support/stories_model.h"
#include "tests/support/test_paths.h"

using namespace snapstream;
using namespace snapstream::runtime;

namespace {

// A deliberately plain float forward pass, one token at a time, over every position it has
// seen; `allowed(layer, kv_head, position)` decides which earlier positions a query may see.
// Its arithmetic uses the same f32 dot product and operation order as the kernels (each is
// tested against a double-precision reference on its own), so that rounding differences do
// not compound over hundreds of steps and hide what this test is about: which positions
// each query attends to.
class DenseReference {
 public:
  using Allowed = std::function<bool(int64_t layer, int64_t kv_head, int64_t position)>;

  explicit DenseReference(const Model& model)
      : m_(model), c_(model.shape), keys_(c_.layers), raw_keys_(c_.layers), values_(c_.layers) {}

  // Returns the logits; when `queries` is given, stores the rotated queries of every layer.
  // `reindexed`: RoPE positions are ranks among the positions a query sees (StreamingLLM), the
  // query itself last; otherwise absolute positions.
  std::vector<float> step(int32_t token, int64_t p, const Allowed& allowed, std::vector<std::vector<float>>* queries = nullptr,
                          bool reindexed = false) {
    const int64_t dim = c_.dim, hd = c_.head_dim, kv_dim = c_.kv_dim(), group = c_.heads / c_.kv_heads;
    std::vector<float> x = row(m_.weights.token_embedding, token);
    for (int64_t l = 0; l < c_.layers; ++l) {
      const LayerWeights& w = m_.weights.layers[static_cast<size_t>(l)];
      auto xn = rmsnorm(x, w.attention_norm);
      auto q = matvec(w.wq, xn), k = matvec(w.wk, xn), v = matvec(w.wv, xn);
      const auto raw_q = q;
      raw_keys_[static_cast<size_t>(l)].insert(raw_keys_[static_cast<size_t>(l)].end(), k.begin(), k.end());
      rope(q, p);
      rope(k, p);
      if (queries) (*queries)[static_cast<size_t>(l)] = q;
      keys_[static_cast<size_t>(l)].insert(keys_[static_cast<size_t>(l)].end(), k.begin(), k.end());
      values_[static_cast<size_t>(l)].insert(values_[static_cast<size_t>(l)].end(), v.begin(), v.end());
      std::vector<float> out(static_cast<size_t>(dim), 0.0f);
      for (int64_t h = 0; h < c_.heads; ++h) {
        const int64_t kv = h / group;
        std::vector<int64_t> seen;
        for (int64_t t = 0; t < p; ++t)
          if (allowed(l, kv, t)) seen.push_back(t);
        seen.push_back(p);
        std::vector<float> weights;
        const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
        if (reindexed) {
          std::vector<float> qh(raw_q.begin() + h * hd, raw_q.begin() + (h + 1) * hd);
          rope(qh, static_cast<int64_t>(seen.size()) - 1);
          for (size_t rank = 0; rank < seen.size(); ++rank) {
            const float* raw = &raw_keys_[l][seen[rank] * kv_dim + kv * hd];
            std::vector<float> key(raw, raw + hd);
            rope(key, static_cast<int64_t>(rank));
            weights.push_back(kernels::cpu::dot_f32(qh.data(), key.data(), hd) * scale);
          }
        } else {
          for (int64_t t : seen) weights.push_back(kernels::cpu::dot_f32(&q[h * hd], &keys_[l][t * kv_dim + kv * hd], hd) * scale);
        }
        const float top = *std::max_element(weights.begin(), weights.end());
        float total = 0.0f;
        for (auto& wt : weights) total += (wt = std::exp(wt - top));
        for (size_t i = 0; i < seen.size(); ++i)
          for (int64_t d = 0; d < hd; ++d) out[h * hd + d] += weights[i] / total * values_[l][seen[i] * kv_dim + kv * hd + d];
      }
      add(x, matvec(w.wo, out));
      xn = rmsnorm(x, w.mlp_norm);
      auto gate = matvec(w.w_gate, xn), up = matvec(w.w_up, xn);
      for (size_t i = 0; i < gate.size(); ++i) gate[i] = gate[i] * (1.0f / (1.0f + std::exp(-gate[i]))) * up[i];
      add(x, matvec(w.w_down, gate));
    }
    return matvec(m_.weights.output, rmsnorm(x, m_.weights.final_norm));
  }

  const std::vector<float>& keys(int64_t layer) const { return keys_[static_cast<size_t>(layer)]; }

 private:
  std::vector<float> row(const kernels::WeightView& w, int64_t r) const {
    std::vector<float> out(static_cast<size_t>(w.cols));
    kernels::dequantize_row(w.dtype, w.row(r), w.cols, out.data());
    return out;
  }
  std::vector<float> matvec(const kernels::WeightView& w, const std::vector<float>& x) const {
    std::vector<float> y(static_cast<size_t>(w.rows));
    for (int64_t r = 0; r < w.rows; ++r) y[r] = kernels::cpu::dot_f32(row(w, r).data(), x.data(), w.cols);
    return y;
  }
  std::vector<float> rmsnorm(const std::vector<float>& x, const float* weight) const {
    float ss = 0.0f;
    for (float v : x) ss += v * v;
    const float scale = 1.0f / std::sqrt(ss / static_cast<float>(x.size()) + c_.norm_eps);
    std::vector<float> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = weight[i] * (scale * x[i]);
    return y;
  }
  void rope(std::vector<float>& v, int64_t p) const {
    const int64_t hd = c_.head_dim;
    for (size_t base = 0; base < v.size(); base += static_cast<size_t>(hd))
      for (int64_t i = 0; i < hd; i += 2) {
        const float angle = static_cast<float>(p) * (1.0f / std::pow(c_.rope_theta, static_cast<float>(i) / static_cast<float>(hd)));
        const float a = v[base + i], b = v[base + i + 1];
        v[base + i] = a * std::cos(angle) - b * std::sin(angle);
        v[base + i + 1] = a * std::sin(angle) + b * std::cos(angle);
      }
  }
  static void add(std::vector<float>& x, const std::vector<float>& y) {
    for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
  }

  const Model& m_;
  const graph::ModelShape& c_;
  std::vector<std::vector<float>> keys_, raw_keys_, values_;  // per layer; raw keys before RoPE
};

// SnapKV selection the slow way: window votes with a causal softmax per query, summed over the
// heads of a group, max-pooled over the candidates, top-K with earlier positions first.
std::vector<int32_t> reference_selection(const graph::ModelShape& c, const std::vector<float>& keys,
                                         const std::vector<std::vector<float>>& window_q, int64_t length, int64_t kv,
                                         const SnapStreamConfig& s) {
  const int64_t hd = c.head_dim, group = c.heads / c.kv_heads, window = static_cast<int64_t>(window_q.size());
  std::vector<double> score(static_cast<size_t>(length), 0.0);
  for (int64_t i = 0; i < window; ++i) {
    const int64_t position = length - window + i;
    for (int64_t h = kv * group; h < (kv + 1) * group; ++h) {
      std::vector<double> w(static_cast<size_t>(position + 1));
      double total = 0.0;
      for (int64_t j = 0; j <= position; ++j) {
        double dot = 0.0;
        for (int64_t d = 0; d < hd; ++d) dot += static_cast<double>(window_q[i][h * hd + d]) * keys[j * c.kv_dim() + kv * hd + d];
        w[j] = dot / std::sqrt(static_cast<double>(hd));
      }
      const double top = *std::max_element(w.begin(), w.end());
      for (auto& x : w) total += (x = std::exp(x - top));
      for (int64_t j = 0; j <= position; ++j) score[j] += w[j] / total;
    }
  }
  const int64_t begin = s.sink, end = length - s.ring, half = s.pool_kernel / 2;
  std::vector<std::pair<double, int32_t>> pooled;
  for (int64_t j = begin; j < end; ++j) {
    double best = -1.0;
    for (int64_t t = std::max(begin, j - half); t < std::min(end, j + half + 1); ++t) best = std::max(best, score[t]);
    pooled.emplace_back(-best, static_cast<int32_t>(j));
  }
  std::sort(pooled.begin(), pooled.end());
  std::vector<int32_t> chosen;
  for (int64_t i = 0; i < s.compressed(); ++i) chosen.push_back(pooled[static_cast<size_t>(i)].second);
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

std::vector<int32_t> long_prompt(const Model& model, const std::filesystem::path& models, size_t length) {
  auto ids = test::golden_story_ids(model, models);
  REQUIRE(ids.size() >= length);
  ids.resize(length);
  return ids;
}

}  // namespace

TEST_CASE("SnapStream decode equals a dense reference over the positions the cache keeps", "[snapstream]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const auto model = load_model((*models / "stories260K.gguf").string());
  const graph::ModelShape& c = model->shape;
  kernels::ThreadPool pool(2);
  const int64_t length = 320, steps = c.context_length - length;  // 192 steps: the 64-slot ring wraps 3 times
  SnapStreamConfig config;
  config.capacity = 128;
  config.kv_dtype = kernels::DType::F32;  // the dense reference holds its keys unrounded
  const bool reindexed = GENERATE(false, true);
  INFO((reindexed ? "re-indexed positions" : "original positions"));
  if (reindexed) config.positions = PositionMode::Reindexed;
  config = config.resolved(c.context_length);
  REQUIRE(config.sink == 4);
  REQUIRE(config.ring == 64);
  const auto prompt = long_prompt(*model, *models, static_cast<size_t>(length));

  // The engine: prefill with compaction, then greedy decode steps.
  SlotKvCache cache(c, config, 2);
  GraphRunner runner(*model, pool, cache);
  std::vector<float> logits(static_cast<size_t>(c.vocab));
  runner.prefill(prompt, 1, logits.data());

  // The reference prefill: full causal attention, keeping the window's queries.
  DenseReference reference(*model);
  std::vector<std::vector<std::vector<float>>> window_q(static_cast<size_t>(c.layers));
  std::vector<float> expected;
  for (int64_t p = 0; p < length; ++p) {
    std::vector<std::vector<float>> q(static_cast<size_t>(c.layers));
    expected = reference.step(prompt[static_cast<size_t>(p)], p, [](int64_t, int64_t, int64_t) { return true; }, &q);
    if (p >= length - config.window)
      for (int64_t l = 0; l < c.layers; ++l) window_q[static_cast<size_t>(l)].push_back(q[static_cast<size_t>(l)]);
  }
  for (size_t i = 0; i < logits.size(); ++i) REQUIRE(logits[i] == Approx(expected[i]).margin(1e-4));

  // The selection the cache holds is the reference's, for every layer and KV head.
  std::vector<std::vector<std::set<int64_t>>> selected(static_cast<size_t>(c.layers));
  for (int64_t l = 0; l < c.layers; ++l)
    for (int64_t kv = 0; kv < c.kv_heads; ++kv) {
      const auto chosen = reference_selection(c, reference.keys(l), window_q[static_cast<size_t>(l)], length, kv, config);
      const int32_t* held = cache.positions(1, l) + kv * config.capacity;
      INFO("layer " << l << ", kv head " << kv);
      CHECK(std::vector<int32_t>(held + config.sink, held + config.sink + config.compressed()) == chosen);
      for (int64_t s = 0; s < config.sink; ++s) CHECK(held[s] == s);
      for (int64_t r = 0; r < config.ring; ++r) CHECK(held[config.sink + config.compressed() + r] == length - config.ring + r);
      selected[static_cast<size_t>(l)].emplace_back(chosen.begin(), chosen.end());
    }

  float worst = 0.0f;
  for (int64_t step = 0; step < steps - 1; ++step) {
    const int32_t token = static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin());
    const int64_t p = length + step;
    const DecodeInput input[1] = {{token, 1}};
    runner.decode(input, logits.data());
    expected = reference.step(
        token, p,
        [&](int64_t l, int64_t kv, int64_t t) {
          return t < config.sink || t >= p - config.ring || selected[static_cast<size_t>(l)][static_cast<size_t>(kv)].count(t) > 0;
        },
        nullptr, reindexed);
    for (size_t i = 0; i < logits.size(); ++i) worst = std::max(worst, std::fabs(logits[i] - expected[i]));
    INFO("decode step " << step << " at position " << p);
    REQUIRE(worst <= 1e-4f);
  }
  CHECK(cache.state(1).ring_writes == steps - 1);
  CHECK(cache.state(1).ring_writes / config.ring >= 2);  // the ring wrapped several times
  CHECK(cache.state(0).length == 0);                   // the other slot was never touched
  WARN("largest logit difference over " << steps - 1 << " decode steps: " << worst);
}

TEST_CASE("SnapStream with room for every position equals the full cache exactly", "[snapstream]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const auto model = load_model((*models / "stories260K.gguf").string());
  kernels::ThreadPool pool(2);
  const auto prompt = long_prompt(*model, *models, 100);
  auto run = [&](bool full_cache, PositionMode positions) {
    SnapStreamConfig config;
    config.full_cache = full_cache;
    config.positions = positions;
    config.capacity = 300;
    SlotKvCache cache(model->shape, config.resolved(model->shape.context_length), 1);
    GraphRunner runner(*model, pool, cache);
    std::vector<float> logits(static_cast<size_t>(model->shape.vocab)), all;
    runner.prefill(prompt, 0, logits.data());
    for (int step = 0; step < 150; ++step) {
      all.insert(all.end(), logits.begin(), logits.end());
      const DecodeInput input[1] = {{static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin()), 0}};
      runner.decode(input, logits.data());
    }
    return all;
  };
  const auto full = run(true, PositionMode::Original);
  CHECK(run(false, PositionMode::Original) == full);
  // Until a token is evicted, re-indexed positions are the absolute ones.
  CHECK(run(false, PositionMode::Reindexed) == full);
}

TEST_CASE("re-indexed positions stream past the context, each step as a model with a longer context computes it",
          "[snapstream]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  const auto model = load_model((*models / "stories260K.gguf").string());
  auto longer = load_model((*models / "stories260K.gguf").string());
  longer->shape.context_length = 4 * model->shape.context_length;
  kernels::ThreadPool pool(2);
  const auto prompt = long_prompt(*model, *models, 100);
  const int64_t steps = 3 * model->shape.context_length;  // the sequence ends near 3.2 contexts
  auto run = [&](const Model& m) {
    SnapStreamConfig config;
    config.positions = PositionMode::Reindexed;
    config.capacity = 128;
    SlotKvCache cache(m.shape, config.resolved(m.shape.context_length), 1);
    REQUIRE(cache.streams_past_context());
    GraphRunner runner(m, pool, cache);
    std::vector<float> logits(static_cast<size_t>(m.shape.vocab)), all;
    runner.prefill(prompt, 0, logits.data());
    for (int64_t step = 0; step < steps; ++step) {
      all.insert(all.end(), logits.begin(), logits.end());
      const DecodeInput input[1] = {{static_cast<int32_t>(std::max_element(logits.begin(), logits.end()) - logits.begin()), 0}};
      runner.decode(input, logits.data());
    }
    CHECK(cache.state(0).length == static_cast<int64_t>(prompt.size()) + steps);
    return all;
  };
  const auto streamed = run(*model);
  CHECK(std::all_of(streamed.begin(), streamed.end(), [](float x) { return std::isfinite(x); }));
  CHECK(streamed == run(*longer));

  // Original positions stop at the context, in the runner and in the generation limit.
  SnapStreamConfig original;
  original.capacity = 128;
  SlotKvCache cache(model->shape, original.resolved(model->shape.context_length), 1);
  CHECK_FALSE(cache.streams_past_context());
  GenerationOptions options;
  options.cache.capacity = 128;
  options.max_tokens = 2000;
  options.sampling.temperature = 0.0f;
  Generator generator(*model, pool, options);
  const auto result = generator.run(prompt);
  CHECK(static_cast<int64_t>(result.prompt_ids.size() + result.ids.size()) <= model->shape.context_length);
  CHECK(generation_limit(2000, 100, 512, false) == 412);
  CHECK(generation_limit(2000, 100, 512, true) == 2000);
}
