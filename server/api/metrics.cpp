// Metric families and their update rules.
#include "server/api/metrics.h"

#include <prometheus/text_serializer.h>

#include <algorithm>

namespace snapstream::server::api {
namespace {

using prometheus::Histogram;

const Histogram::BucketBoundaries kLatencyBuckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5,
                                                     0.75,  1.0,   2.5,  5.0,  7.5,  10.0, 20.0, 40.0, 80.0};
// Emulated steps of a small model on an accelerator take microseconds.
const Histogram::BucketBoundaries kDeviceLatencyBuckets = {1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 0.001, 0.0025, 0.005, 0.01,
                                                           0.025, 0.05, 0.1,    0.25,   0.5,  1.0,    2.5,  5.0,   10.0};
const Histogram::BucketBoundaries kTokenBuckets = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000};

// Counters follow engine totals: each render adds what the total grew by since the last.
void raise_to(prometheus::Counter& counter, double total, double& seen) {
  if (total > seen) counter.Increment(total - seen);
  seen = std::max(seen, total);
}

}  // namespace

Metrics::Metrics(const std::string& model_name, int64_t kv_bytes_per_token, const runtime::StepClock* device)
    : model_name_(model_name),
      kv_bytes_per_token_(kv_bytes_per_token),
      registry_(std::make_shared<prometheus::Registry>()),
      device_(device) {
  const prometheus::Labels labels = {{"model_name", model_name}};
  auto gauge = [&](const std::string& name, const std::string& help) {
    return &prometheus::BuildGauge().Name("snapstream:" + name).Help(help).Register(*registry_).Add(labels);
  };
  auto counter = [&](const std::string& name, const std::string& help) {
    return &prometheus::BuildCounter().Name("snapstream:" + name).Help(help).Register(*registry_).Add(labels);
  };
  auto histogram = [&](const std::string& name, const std::string& help, const Histogram::BucketBoundaries& buckets) {
    return &prometheus::BuildHistogram().Name("snapstream:" + name).Help(help).Register(*registry_).Add(labels, buckets);
  };
  running_ = gauge("num_requests_running", "Number of requests holding a sequence slot.");
  waiting_ = gauge("num_requests_waiting", "Number of requests waiting for a sequence slot.");
  kv_usage_ = gauge("kv_cache_usage_perc", "KV-cache usage: the share of sequence slots held. 1 means 100 percent.");
  kv_bytes_actual_ = gauge("kv_cache_bytes_held", "KV bytes the running sequences hold in their slots (live entries).");
  kv_bytes_full_ = gauge("kv_cache_bytes_full_equivalent", "KV bytes the running sequences would hold with a full cache.");
  compression_ratio_ = gauge("kv_cache_compression_ratio", "Full-cache KV bytes over the KV bytes held, for running sequences.");
  padding_share_ = gauge("graph_padding_ratio", "Share of decode graph rows that were bucket padding, since start.");
  prompt_tokens_ = counter("prompt_tokens_total", "Number of prefill tokens processed.");
  generation_tokens_ = counter("generation_tokens_total", "Number of generation tokens processed.");
  evicted_tokens_ = counter("kv_cache_evicted_tokens_total", "Tokens dropped from KV caches by SnapKV selection or the ring.");
  success_ = &prometheus::BuildCounter()
                  .Name("snapstream:request_success_total")
                  .Help("Count of finished requests, by finish reason.")
                  .Register(*registry_);
  ttft_ = histogram("time_to_first_token_seconds", "Histogram of time to first token in seconds.", kLatencyBuckets);
  inter_token_ = histogram("inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", kLatencyBuckets);
  e2e_ = histogram("e2e_request_latency_seconds", "Histogram of end to end request latency in seconds.", kLatencyBuckets);
  queue_ = histogram("request_queue_time_seconds", "Histogram of time spent waiting for a slot in seconds.", kLatencyBuckets);
  prompt_length_ = histogram("request_prompt_tokens", "Number of prefill tokens processed per request.", kTokenBuckets);
  generation_length_ = histogram("request_generation_tokens", "Number of generation tokens processed per request.", kTokenBuckets);
  if (device_ == nullptr) return;
  const runtime::EmulatedFootprint& f = device_->footprint();
  prometheus::BuildGauge()
      .Name("snapstream:emulation_info")
      .Help("The emulated accelerator steps are priced on; proxy=\"true\" when they are priced as another model's.")
      .Register(*registry_)
      .Add({{"model_name", model_name}, {"emulated_model", f.proxy ? f.model : model_name}, {"system", f.system},
            {"proxy", f.proxy ? "true" : "false"}, {"tp", std::to_string(f.tp)}})
      .Set(1);
  emulated_ttft_ = histogram("emulated_time_to_first_token_seconds",
                             "Histogram of time to first token on the emulated device's clock, in seconds.", kDeviceLatencyBuckets);
  emulated_itl_ = histogram("emulated_inter_token_latency_seconds",
                            "Histogram of inter-token latency on the emulated device's clock, in seconds.", kDeviceLatencyBuckets);
  device_seconds_ = counter("emulated_device_seconds_total", "Seconds of emulated device time the engine's steps were priced at.");
  emulated_tokens_per_second_ =
      gauge("emulated_generation_tokens_per_second", "Generated tokens per second of emulated device time, since start.");
  emulated_hbm_ = gauge("emulated_hbm_bytes_held", "HBM bytes per emulated device: weights plus the running sequences' KV.");
  emulated_sram_ = gauge("emulated_sram_bytes_held", "On-chip SRAM bytes per emulated device placed by the largest kernel.");
  emulated_pcu_ = gauge("emulated_pcu_utilisation", "Achieved over peak FLOPs of the emulated device during a full-batch decode step.");
  emulated_pmu_ = gauge("emulated_pmu_utilisation", "Share of the emulated device's PMU SRAM the largest kernel places.");
  emulated_sram_->Set(f.sram_bytes);
  emulated_pcu_->Set(f.pcu_utilisation);
  emulated_pmu_->Set(f.pmu_utilisation);
}

void Metrics::request_finished(const std::string& finish_reason, int64_t prompt_tokens, int64_t generated_tokens, double queue,
                               double first_token, double end_to_end) {
  success_->Add({{"model_name", model_name_}, {"finished_reason", finish_reason}}).Increment();
  prompt_tokens_->Increment(static_cast<double>(prompt_tokens));
  generation_tokens_->Increment(static_cast<double>(generated_tokens));
  prompt_length_->Observe(static_cast<double>(prompt_tokens));
  generation_length_->Observe(static_cast<double>(generated_tokens));
  queue_->Observe(queue);
  if (first_token >= 0.0) ttft_->Observe(first_token);
  e2e_->Observe(end_to_end);
}

std::string Metrics::render(const runtime::EngineStats& stats, int64_t slots) {
  std::lock_guard lock(render_mutex_);
  running_->Set(static_cast<double>(stats.running));
  waiting_->Set(static_cast<double>(stats.waiting));
  kv_usage_->Set(slots > 0 ? static_cast<double>(stats.running) / static_cast<double>(slots) : 0.0);
  const auto actual = static_cast<double>(stats.kv_live_tokens * kv_bytes_per_token_);
  const auto full = static_cast<double>(stats.kv_full_tokens * kv_bytes_per_token_);
  kv_bytes_actual_->Set(actual);
  kv_bytes_full_->Set(full);
  compression_ratio_->Set(actual > 0.0 ? full / actual : 1.0);
  const int64_t rows = stats.decode_rows + stats.padded_rows;
  padding_share_->Set(rows > 0 ? static_cast<double>(stats.padded_rows) / static_cast<double>(rows) : 0.0);
  raise_to(*evicted_tokens_, static_cast<double>(stats.evicted_tokens), evicted_seen_);
  render_ranks(stats.ranks);
  if (device_ != nullptr) {
    raise_to(*device_seconds_, stats.device_seconds, device_seconds_seen_);
    emulated_tokens_per_second_->Set(stats.device_seconds > 0 ? static_cast<double>(stats.generated_tokens) / stats.device_seconds : 0.0);
    const runtime::EmulatedFootprint& f = device_->footprint();
    emulated_hbm_->Set(f.weight_hbm_bytes + f.kv_bytes_per_sequence * static_cast<double>(stats.running));
  }
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

void Metrics::render_ranks(const std::vector<runtime::RankSeconds>& ranks) {
  if (ranks.empty()) return;
  if (rank_step_seconds_ == nullptr) {
    rank_step_seconds_ = &prometheus::BuildCounter()
                              .Name("snapstream:rank_step_seconds_total")
                              .Help("Seconds each tensor-parallel rank spent in prefill and decode steps, collectives included.")
                              .Register(*registry_);
    rank_collective_seconds_ = &prometheus::BuildCounter()
                                    .Name("snapstream:rank_collective_seconds_total")
                                    .Help("Seconds each tensor-parallel rank spent in collectives: sending its part, waiting for the others'.")
                                    .Register(*registry_);
    rank_steps_seen_.assign(ranks.size(), 0.0);
    rank_collectives_seen_.assign(ranks.size(), 0.0);
  }
  for (size_t rank = 0; rank < ranks.size() && rank < rank_steps_seen_.size(); ++rank) {
    const prometheus::Labels labels = {{"model_name", model_name_}, {"rank", std::to_string(rank)}};
    raise_to(rank_step_seconds_->Add(labels), ranks[rank].steps, rank_steps_seen_[rank]);
    raise_to(rank_collective_seconds_->Add(labels), ranks[rank].collectives, rank_collectives_seen_[rank]);
  }
}

}  // namespace snapstream::server::api
