// `snapstream bench`: prefill and decode tokens/s for N concurrent sequences, the bytes each
// decode step reads, the machine's memory bandwidth and multiply-add rate, and the share of each
// roofline decode reaches.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <nlohmann/json.hpp>

#include "app/cache_options.h"
#include "app/engine_options.h"
#include "app/commands.h"
#include "app/model_options.h"
#include "app/process_ranks.h"
#include "app/rank_report.h"
#include "bench/compute_probe.h"
#include "bench/generation_bench.h"
#include "bench/median.h"
#include "bench/memory_bandwidth.h"

namespace snapstream::app {
namespace {

// Passes of the bandwidth probe after each repeat; the best one counts, as in STREAM.
constexpr int kProbePasses = 3;

// Decode's share of the memory-bandwidth roofline, repeat by repeat against the probe taken right
// after it, then the median over repeats.
struct RooflineShares {
  double read_bytes_per_s = 0.0, copy_bytes_per_s = 0.0;  // medians of the probes
  double weights = 0.0, with_kv = 0.0;                    // medians of each repeat's share
  std::vector<double> weights_by_repeat;
  double lowest_weights() const {
    return weights_by_repeat.empty() ? 0.0 : *std::min_element(weights_by_repeat.begin(), weights_by_repeat.end());
  }
  double highest_weights() const {
    return weights_by_repeat.empty() ? 0.0 : *std::max_element(weights_by_repeat.begin(), weights_by_repeat.end());
  }
};

RooflineShares roofline_shares(const bench::GenerationBenchResult& result, const std::vector<bench::BandwidthResult>& probes) {
  RooflineShares shares;
  const auto& steps = result.decode_seconds_per_step_by_repeat;
  if (probes.size() != steps.size()) return shares;  // no probe asked for
  std::vector<double> reads, copies, with_kv;
  for (size_t r = 0; r < probes.size(); ++r) {
    reads.push_back(probes[r].read_bytes_per_s);
    copies.push_back(probes[r].copy_bytes_per_s);
    const double per_second = 1.0 / (steps[r] * probes[r].read_bytes_per_s);
    shares.weights_by_repeat.push_back(static_cast<double>(result.weight_bytes_per_step) * per_second);
    with_kv.push_back(static_cast<double>(result.weight_bytes_per_step + result.kv_bytes_per_step) * per_second);
  }
  shares.read_bytes_per_s = bench::median(reads);
  shares.copy_bytes_per_s = bench::median(copies);
  shares.weights = bench::median(shares.weights_by_repeat);
  shares.with_kv = bench::median(with_kv);
  return shares;
}

struct BenchArgs {
  ModelFlags model;
  bench::GenerationBenchOptions options;
  int64_t bandwidth_mib = 1024;
  int compute_passes = 3;
  bool json = false;
};

// Each op kind's seconds per unit (a decode step, or one repeat's prefills) and what no op
// accounts for (the runner's own work between ops) as "outside ops", largest first; `seconds`
// is the unit's measured time.
std::vector<std::pair<std::string, double>> profile_rows(const graph::OpProfile& p, int64_t units, double seconds) {
  std::vector<std::pair<std::string, double>> rows;
  for (size_t k = 0; k < graph::OpProfile::kKinds; ++k)
    if (p.calls[k] > 0)
      rows.emplace_back(std::string(graph::op_kind_name(static_cast<graph::OpKind>(k))), p.seconds[k] / static_cast<double>(units));
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  rows.emplace_back("outside ops", std::max(0.0, seconds - p.total_seconds() / static_cast<double>(units)));
  return rows;
}

std::vector<std::pair<std::string, double>> decode_profile_rows(const bench::GenerationBenchResult& result,
                                                                const bench::GenerationBenchOptions& o) {
  return profile_rows(result.decode_profile, o.decode_tokens * o.repeats, result.decode_seconds_per_step);
}

std::vector<std::pair<std::string, double>> prefill_profile_rows(const bench::GenerationBenchResult& result,
                                                                 const bench::GenerationBenchOptions& o) {
  return profile_rows(result.prefill_profile, o.repeats, result.prefill_seconds);
}

// The model's matmul kernel on weights in cache, at the bench's batch, with the pool's threads
// and with one: batched decode is bound by this rate rather than by memory, and the two rates
// show what a second thread adds to arithmetic (hardware threads of one core share its units).
struct ComputeRates {
  bench::ComputeResult all, one;
  int64_t multiply_adds_per_step = 0;  // the decode step's matrix multiply-adds, all sequences
  double decode_multiply_adds_per_s = 0.0;
  double share() const { return all.multiply_adds_per_s > 0 ? decode_multiply_adds_per_s / all.multiply_adds_per_s : 0.0; }
};

ComputeRates compute_rates(const runtime::Model& model, kernels::ThreadPool& pool, const bench::GenerationBenchResult& result,
                           int64_t concurrency, bool row_groups, int passes) {
  const kernels::WeightView& like = model.weights.layers.front().wq;
  bench::ComputeProbe probe(like.dtype, like.cols, concurrency, row_groups, pool.size());
  kernels::ThreadPool one_thread(1);
  ComputeRates rates;
  rates.all = probe.measure(pool, passes);
  rates.one = probe.measure(one_thread, passes);
  rates.multiply_adds_per_step = model.weights.multiply_adds_per_token() * concurrency;
  rates.decode_multiply_adds_per_s = static_cast<double>(rates.multiply_adds_per_step) / result.decode_seconds_per_step;
  return rates;
}

void run_bench(const BenchArgs& args) {
  const auto model = load_model_logged(args.model);
  kernels::ThreadPool pool(args.model.threads);
  bench::GenerationBenchOptions o = args.options;
  o.graphs = plan_for_this_rank(o.graphs);
  o.join = [&model](runtime::GraphRunner& runner) { return lead_or_follow(runner, *model); };
  spdlog::info("benchmarking {} with {} threads: {} sequences of {} prompt + {} decode tokens, {} repeats, {}", args.model.path,
               pool.size(), o.concurrency, o.prompt_tokens, o.decode_tokens, o.repeats,
               o.cache.resolved(model->shape.context_length).describe());
  // The probe runs right after each repeat's decode, so each repeat's share compares two
  // measurements taken under the same load; the reported share is the median of those.
  std::optional<bench::BandwidthProbe> probe;
  std::vector<bench::BandwidthResult> probes;
  if (args.bandwidth_mib > 0) {
    probe.emplace(pool, args.bandwidth_mib << 20);
    o.after_repeat = [&] { probes.push_back(probe->measure(kProbePasses)); };
  }
  const auto result = bench::run_generation_bench(*model, pool, o);
  if (!result.led) return;
  const RooflineShares shares = roofline_shares(result, probes);
  const double peak = shares.read_bytes_per_s;
  std::optional<ComputeRates> compute;
  if (args.compute_passes > 0 && !model->weights.layers.empty())
    compute = compute_rates(*model, pool, result, o.concurrency, o.graphs.row_groups, args.compute_passes);

  if (args.json) {
    nlohmann::json out = {
        {"model", args.model.path},
        {"threads", pool.size()},
        {"concurrency", o.concurrency},
        {"prompt_tokens", o.prompt_tokens},
        {"decode_tokens", o.decode_tokens},
        {"kv_capacity", o.cache.resolved(model->shape.context_length).capacity},
        {"full_cache", o.cache.full_cache},
        {"prefill_tokens_per_s", result.prefill_tokens_per_s},
        {"compaction_share_of_prefill", result.compaction_share},
        {"decode_tokens_per_s", result.decode_tokens_per_s},
        {"decode_seconds_per_step", result.decode_seconds_per_step},
        {"weight_bytes_per_step", result.weight_bytes_per_step},
        {"kv_bytes_per_step", result.kv_bytes_per_step},
        {"weight_bytes_per_s", result.weight_bytes_per_s},
        {"decode_bytes_per_s", result.decode_bytes_per_s},
        {"memory_read_bytes_per_s", shares.read_bytes_per_s},
        {"memory_copy_bytes_per_s", shares.copy_bytes_per_s},
        {"decode_roofline_share", shares.weights},
        {"decode_roofline_share_with_kv", shares.with_kv},
        {"decode_roofline_share_by_repeat", shares.weights_by_repeat},
    };
    if (compute) {
      out["multiply_adds_per_step"] = compute->multiply_adds_per_step;
      out["compute_multiply_adds_per_s"] = compute->all.multiply_adds_per_s;
      out["compute_multiply_adds_per_s_one_thread"] = compute->one.multiply_adds_per_s;
      out["decode_compute_share"] = compute->share();
      out["compute_weights_regrouped"] = compute->all.regrouped;
    }
    if (o.profile) {
      for (const auto& [kind, seconds] : prefill_profile_rows(result, o))
        out["prefill_profile_seconds"][kind] = seconds;
      for (const auto& [kind, seconds] : decode_profile_rows(result, o)) out["decode_profile_seconds_per_step"][kind] = seconds;
    }
    if (!result.decode_ranks.empty()) out["decode_ranks"] = rank_seconds_json(result.decode_ranks);
    std::cout << out.dump(2) << std::endl;
    return;
  }
  std::cout << fmt::format("model                 {}\n", args.model.path)
            << fmt::format("threads               {}\n", pool.size())
            << fmt::format("sequences             {} x ({} prompt + {} decode tokens), medians of {}\n", o.concurrency,
                           o.prompt_tokens, o.decode_tokens, o.repeats)
            << fmt::format("prefill               {:.1f} tokens/s ({:.2f}% of it compacting the cache)\n",
                           result.prefill_tokens_per_s, result.compaction_share * 100.0)
            << fmt::format("decode                {:.2f} tokens/s aggregate ({:.3f} ms/step)\n", result.decode_tokens_per_s,
                           result.decode_seconds_per_step * 1e3)
            << fmt::format("bytes per decode step {:.1f} MB weights + {:.1f} MB KV\n", result.weight_bytes_per_step / 1e6,
                           result.kv_bytes_per_step / 1e6)
            << fmt::format("decode reads          {:.2f} GB/s of weights, {:.2f} GB/s with KV\n",
                           result.weight_bytes_per_s / 1e9, result.decode_bytes_per_s / 1e9);
  if (args.bandwidth_mib > 0)
    std::cout << fmt::format("memory bandwidth      {:.2f} GB/s read, {:.2f} GB/s copy (medians of a probe after each repeat, "
                             "each the best of {} passes over {} MiB)\n",
                             peak / 1e9, shares.copy_bytes_per_s / 1e9, kProbePasses, args.bandwidth_mib)
              << fmt::format("decode roofline share {:.1f}% (weights only; repeats {:.1f}-{:.1f}%), {:.1f}% with KV\n",
                             shares.weights * 100.0, shares.lowest_weights() * 100.0, shares.highest_weights() * 100.0,
                             shares.with_kv * 100.0);
  if (compute)
    std::cout << fmt::format("arithmetic            {:.1f} G multiply-adds/s on {} threads, {:.1f} G on 1 ({} weights{}, {} "
                             "activation rows, {} KiB in cache; best of {} passes)\n",
                             compute->all.multiply_adds_per_s / 1e9, compute->all.threads, compute->one.multiply_adds_per_s / 1e9,
                             kernels::dtype_name(model->weights.wq_dtype()), compute->all.regrouped ? " in row groups" : "",
                             o.concurrency, compute->all.weight_bytes >> 10, args.compute_passes)
              << fmt::format("decode compute share  {:.1f}% (the step's matmul multiply-adds against the {}-thread rate)\n",
                             compute->share() * 100.0, compute->all.threads);
  if (!result.decode_ranks.empty())
    std::cout << "decode time of each tensor-parallel rank (every repeat)\n" << describe_rank_seconds(result.decode_ranks)
              << fmt::format("(the bandwidth probe ran on rank 0's {} thread(s) only; the {} ranks decode with all of theirs)\n",
                             pool.size(), result.decode_ranks.size());
  if (o.profile) {
    std::cout << fmt::format("prefill of {} sequence(s) by op kind (profiled runs are slightly slower)\n", o.concurrency);
    for (const auto& [kind, seconds] : prefill_profile_rows(result, o))
      std::cout << fmt::format("  {:<20} {:8.3f} ms       {:5.1f}%\n", kind, seconds * 1e3, 100.0 * seconds / result.prefill_seconds);
    std::cout << "decode step by op kind\n";
    for (const auto& [kind, seconds] : decode_profile_rows(result, o))
      std::cout << fmt::format("  {:<20} {:8.3f} ms/step {:5.1f}%\n", kind, seconds * 1e3,
                               100.0 * seconds / result.decode_seconds_per_step);
  }
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand("bench", "Measure prefill/decode tokens/s and the decode bandwidth roofline");
  add_model_options(cmd, args->model);
  cmd->add_option("--concurrency", args->options.concurrency, "sequences decoded together")->check(CLI::PositiveNumber);
  cmd->add_option("--prompt-tokens", args->options.prompt_tokens, "prompt length")->check(CLI::PositiveNumber);
  cmd->add_option("--decode-tokens", args->options.decode_tokens, "decode steps")->check(CLI::PositiveNumber);
  cmd->add_option("--repeats", args->options.repeats, "runs; the median is reported")->check(CLI::PositiveNumber);
  cmd->add_option("--tp", args->options.graphs.shards, "tensor-parallel shards")->check(CLI::PositiveNumber);
  add_row_groups_flag(cmd, args->options.graphs);
  cmd->add_option("--bandwidth-mib", args->bandwidth_mib, "buffer of the bandwidth probe (0 skips it)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--compute-passes", args->compute_passes,
                  "passes of the multiply-add probe with the pool and with one thread (0 skips it)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--json", args->json, "print one JSON object");
  cmd->add_flag("--profile", args->options.profile, "time prefill and decode op by op and print each kind's share");
  add_cache_options(cmd, args->options.cache);
  cmd->callback([args] { run_bench(*args); });
}

}  // namespace snapstream::app
