// The server's Prometheus metrics, with vLLM's names and meanings under the prefix
// "snapstream:" and a model_name label (so vLLM dashboards carry over), plus SnapStream's own.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/engine.h"

namespace snapstream::server::api {

class Metrics {
 public:
  // `device`: the engine's emulated accelerator, if it has one; adds the emulated metrics.
  Metrics(const std::string& model_name, int64_t kv_bytes_per_token, const runtime::StepClock* device = nullptr);

  // A finished request, with its timings in seconds (first_token < 0: none was made).
  void request_finished(const std::string& finish_reason, int64_t prompt_tokens, int64_t generated_tokens, double queue,
                        double first_token, double end_to_end);
  void inter_token(double seconds) { inter_token_->Observe(seconds); }
  // The same timings on the emulated device's clock.
  void emulated_first_token(double seconds) {
    if (emulated_ttft_ != nullptr) emulated_ttft_->Observe(seconds);
  }
  void emulated_inter_token(double seconds) {
    if (emulated_itl_ != nullptr) emulated_itl_->Observe(seconds);
  }

  // The Prometheus text format, with the gauges read from `stats` now.
  std::string render(const runtime::EngineStats& stats, int64_t slots);

 private:
  void render_ranks(const std::vector<runtime::RankSeconds>& ranks);

  std::string model_name_;
  int64_t kv_bytes_per_token_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Gauge* running_;
  prometheus::Gauge* waiting_;
  prometheus::Gauge* kv_usage_;
  prometheus::Gauge* kv_bytes_actual_;
  prometheus::Gauge* kv_bytes_full_;
  prometheus::Gauge* compression_ratio_;
  prometheus::Gauge* padding_share_;
  prometheus::Counter* prompt_tokens_;
  prometheus::Counter* generation_tokens_;
  prometheus::Counter* evicted_tokens_;
  prometheus::Family<prometheus::Counter>* success_;
  prometheus::Histogram* ttft_;
  prometheus::Histogram* inter_token_;
  prometheus::Histogram* e2e_;
  prometheus::Histogram* queue_;
  prometheus::Histogram* prompt_length_;
  prometheus::Histogram* generation_length_;
  const runtime::StepClock* device_;
  prometheus::Histogram* emulated_ttft_ = nullptr;
  prometheus::Histogram* emulated_itl_ = nullptr;
  prometheus::Counter* device_seconds_ = nullptr;
  prometheus::Gauge* emulated_tokens_per_second_ = nullptr;
  prometheus::Gauge* emulated_hbm_ = nullptr;
  prometheus::Gauge* emulated_sram_ = nullptr;
  prometheus::Gauge* emulated_pcu_ = nullptr;
  prometheus::Gauge* emulated_pmu_ = nullptr;
  // Tensor-parallel ranks: registered at the first render that has them.
  prometheus::Family<prometheus::Counter>* rank_step_seconds_ = nullptr;
  prometheus::Family<prometheus::Counter>* rank_collective_seconds_ = nullptr;
  std::mutex render_mutex_;  // guards the totals seen so far
  double evicted_seen_ = 0.0;
  double device_seconds_seen_ = 0.0;
  std::vector<double> rank_steps_seen_, rank_collectives_seen_;
};

}  // namespace snapstream::server::api
