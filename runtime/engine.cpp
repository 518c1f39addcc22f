// The engine loop, split into single-purpose steps: reap cancelled requests, decode every
// running sequence, admit waiting requests into free slots. Any failure inside a step ends
// the affected requests with an error instead of taking the engine down.
#include "runtime/engine.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <thread>

#include "runtime/prompt_check.h"
#include "runtime/scheduler.h"
#include "runtime/stop_rule.h"
#include "runtime/token_logprobs.h"

namespace snapstream::runtime {

Engine::Engine(const Model& model, kernels::ThreadPool& pool, EngineOptions options)
    : model_(model),
      options_(options),
      cache_(model.shape, options.cache.resolved(model.shape.context_length), options.slots, held_kv_heads(model.shape, options.graphs)),
      runner_(model, pool, cache_, options.graphs),
      pool_(pool) {
  if (options_.max_waiting < 0) throw ConfigError("the waiting queue size must be >= 0");
  if (options_.prefill_token_budget < 1) throw ConfigError("the prefill token budget must be >= 1");
  if (options_.pace && !options_.step_clock) throw ConfigError("pacing needs an emulated device to pace to");
  if (options_.step_clock) {
    try {
      step_clock_ = options_.step_clock(runner_.graphs(), model.shape.context_length);
    } catch (const ConfigError& e) {
      if (!options_.step_clock_optional || options_.pace)
        throw ConfigError(std::string("the emulated device cannot run these graphs: ") + e.what());
      spdlog::warn("no emulated device clock: {}", e.what());
    }
    if (step_clock_) spdlog::info("emulated device: {}", step_clock_->footprint().description);
  }
  for (int64_t slot = options_.slots - 1; slot >= 0; --slot) free_slots_.push_back(slot);
  stats_.free_slots = options_.slots;
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() { shutdown(); }

void Engine::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  work_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::shared_ptr<RequestStream> Engine::submit(RequestSpec spec) {
  check_prompt(spec.prompt_ids, model_.shape.context_length, model_.tokenizer);
  if (spec.max_tokens < 0) throw InvalidRequestError("max_tokens must be >= 0");
  spec.sampling.validate();
  for (const auto& [token, bias] : spec.sampling.logit_bias)
    if (token >= model_.shape.vocab)
      throw InvalidRequestError("a logit bias names token " + std::to_string(token) + ", beyond the vocabulary of " +
                                std::to_string(model_.shape.vocab));

  auto stream = std::make_shared<RequestStream>();
  if (step_clock_) stream->set_device_submitted_at(device_clock_.load());
  {
    std::lock_guard lock(mutex_);
    if (!failure_.empty()) throw EngineFailedError(failure_);
    if (stopping_) throw QueueFullError("the engine is shutting down");
    if (static_cast<int64_t>(waiting_.size()) >= options_.max_waiting)
      throw QueueFullError("the waiting queue is full (" + std::to_string(options_.max_waiting) + " requests); retry later");
    waiting_.push_back({stream, std::move(spec)});
    stats_.waiting = static_cast<int64_t>(waiting_.size());
  }
  work_.notify_one();
  return stream;
}

EngineStats Engine::stats() const {
  EngineStats stats;
  {
    std::lock_guard lock(mutex_);
    stats = stats_;
  }
  if (const StepRelay* relay = runner_.step_relay()) stats.ranks = relay->rank_seconds();
  return stats;
}

void Engine::loop() {
  // Failures of one request end that request inside step(); what escapes it is a fault of the
  // engine itself, which then stops taking work and says so (health turns 503).
  FinishReason reason = FinishReason::Cancelled;
  std::string why = "the engine shut down";
  try {
    for (;;) {
      {
        std::unique_lock lock(mutex_);
        work_.wait(lock, [this] { return stopping_ || !waiting_.empty() || !running_.empty() || prefilling_; });
        if (stopping_) break;
      }
      step();
    }
  } catch (const std::exception& e) {
    spdlog::critical("the engine failed and stops: {}", e.what());
    reason = FinishReason::Error;
    why = std::string("the engine failed: ") + e.what();
    std::lock_guard lock(mutex_);
    failure_ = why;
    stopping_ = true;
  }
  for (auto& sequence : running_) sequence.stream->finish(reason, why);
  running_.clear();
  if (prefilling_) prefilling_->stream->finish(reason, why);
  prefilling_.reset();
  std::lock_guard lock(mutex_);
  for (auto& waiting : waiting_) waiting.stream->finish(reason, why);
  waiting_.clear();
  // Nothing runs or waits any more: the gauges clients read must say so.
  stats_.running = stats_.waiting = 0;
  stats_.free_slots = options_.slots;
  stats_.kv_live_tokens = stats_.kv_full_tokens = 0;
}

std::string Engine::failure() const {
  std::lock_guard lock(mutex_);
  return failure_;
}

void Engine::step() {
  const int64_t index = step_index_++;
  strike_if_due(fault_, FaultSite::Engine, index);
  reap_cancelled();
  decode_running();
  admit_waiting(continue_chunked_prefill());
  int64_t live = 0, full = 0;
  auto count = [&](const Sequence& s) {
    const int64_t length = cache_.state(s.slot).length;
    live += std::min(length, cache_.capacity());
    full += length;
  };
  for (const auto& sequence : running_) count(sequence);
  if (prefilling_) count(*prefilling_);
  std::lock_guard lock(mutex_);
  ++stats_.steps;
  stats_.kv_live_tokens = live;
  stats_.kv_full_tokens = full;
  stats_.evicted_tokens = runner_.evicted_tokens();
  stats_.decode_rows = runner_.decode_rows();
  stats_.padded_rows = runner_.padded_rows();
}

void Engine::publish_slots() {
  std::lock_guard lock(mutex_);
  stats_.free_slots = static_cast<int64_t>(free_slots_.size());
  stats_.running = options_.slots - stats_.free_slots;
  stats_.waiting = static_cast<int64_t>(waiting_.size());
}

void Engine::charge_device(const graph::GraphKey& key, int64_t first_position, std::chrono::steady_clock::time_point started) {
  if (!step_clock_) return;
  const double seconds = step_clock_->seconds(key, first_position);
  if (options_.pace) std::this_thread::sleep_until(started + std::chrono::duration<double>(seconds));
  device_clock_.store(device_clock_.load() + seconds);
  std::lock_guard lock(mutex_);
  stats_.device_seconds = device_clock_.load();
}

void Engine::reap_cancelled() {
  for (auto& sequence : running_)
    if (sequence.stream->cancel_requested()) release(sequence, FinishReason::Cancelled);
  std::erase_if(running_, [](const Sequence& s) { return s.stream == nullptr; });
  if (prefilling_ && prefilling_->stream->cancel_requested()) {
    runner_.abandon_prefill(prefilling_->slot);
    release(*prefilling_, FinishReason::Cancelled);
    prefilling_.reset();
  }
  std::lock_guard lock(mutex_);
  for (auto& waiting : waiting_)
    if (waiting.stream->cancel_requested()) waiting.stream->finish(FinishReason::Cancelled);
  std::erase_if(waiting_, [](const Waiting& w) { return w.stream->finished(); });
  stats_.waiting = static_cast<int64_t>(waiting_.size());
}

void Engine::decode_running() {
  if (running_.empty()) return;
  std::vector<DecodeInput> batch;
  for (const auto& sequence : running_) batch.push_back({sequence.next_input, sequence.slot});
  logits_.resize(batch.size() * static_cast<size_t>(model_.shape.vocab));
  try {
    strike_if_due(fault_, FaultSite::Decode, step_index_ - 1);
    const auto started = std::chrono::steady_clock::now();
    runner_.decode(batch, logits_.data());
    charge_device(runner_.graphs().decode(static_cast<int64_t>(batch.size())).key, 0, started);
  } catch (const std::exception& e) {
    spdlog::error("decode step failed: {}", e.what());
    for (auto& sequence : running_) release(sequence, FinishReason::Error, e.what());
    running_.clear();
    return;
  }
  // Each sequence draws from its own sampler, so all of them draw at once on the pool's threads.
  const auto vocab = static_cast<size_t>(model_.shape.vocab);
  std::vector<int32_t> tokens(running_.size());
  std::vector<std::exception_ptr> failures(running_.size());
  pool_.parallel_for(static_cast<int64_t>(running_.size()), [&](int64_t begin, int64_t end) {
    for (auto i = static_cast<size_t>(begin); i < static_cast<size_t>(end); ++i) {
      try {
        tokens[i] = running_[i].sampler.sample({logits_.data() + i * vocab, vocab});
      } catch (...) {
        failures[i] = std::current_exception();  // a pool job must not throw; rethrown below, in order
      }
    }
  }, model_.shape.vocab);
  for (size_t i = 0; i < running_.size(); ++i) {
    if (failures[i]) std::rethrow_exception(failures[i]);
    take_token(running_[i], logits_.data() + i * vocab, tokens[i]);
  }
  std::erase_if(running_, [](const Sequence& s) { return s.stream == nullptr; });
}

int64_t Engine::continue_chunked_prefill() {
  if (!prefilling_) return 0;
  Sequence sequence = std::move(*prefilling_);
  prefilling_.reset();
  const int64_t tokens = sequence.chunks[sequence.next_chunk];
  run_prefill_chunk(std::move(sequence));
  return tokens;
}

void Engine::admit_waiting(int64_t spent) {
  std::vector<Waiting> admitted;
  {
    std::lock_guard lock(mutex_);
    std::vector<WaitingPrompt> prompts;
    for (const auto& waiting : waiting_) {
      const auto length = static_cast<int64_t>(waiting.spec.prompt_ids.size());
      const int64_t chunk = runner_.graphs().max_prefill_length();
      prompts.push_back({std::min(length, chunk), length > chunk});
    }
    const int64_t count = plan_admissions(static_cast<int64_t>(free_slots_.size()), prompts, options_.prefill_token_budget,
                                          spent, prefilling_.has_value());
    for (int64_t i = 0; i < count; ++i) {
      admitted.push_back(std::move(waiting_.front()));
      waiting_.pop_front();
    }
  }
  for (auto& request : admitted) {
    Sampler sampler(request.spec.sampling, request.spec.prompt_ids);
    Sequence sequence{request.stream, std::move(request.spec), sampler, free_slots_.back(), 0, 0, 0, {}, 0, 0};
    free_slots_.pop_back();
    publish_slots();
    const auto length = static_cast<int64_t>(sequence.spec.prompt_ids.size());
    sequence.limit = generation_limit(sequence.spec.max_tokens, length, model_.shape.context_length, cache_.streams_past_context());
    sequence.chunks = runner_.chunk_lengths(length);
    sequence.stream->mark_admitted();
    {
      std::lock_guard lock(mutex_);
      stats_.prompt_tokens += length;
    }
    if (sequence.limit == 0) {
      release(sequence, FinishReason::Length);
      continue;
    }
    run_prefill_chunk(std::move(sequence));
  }
}

void Engine::run_prefill_chunk(Sequence sequence) {
  const int64_t count = sequence.chunks[sequence.next_chunk];
  logits_.resize(static_cast<size_t>(model_.shape.vocab));
  bool complete = false;
  try {
    const auto started = std::chrono::steady_clock::now();
    complete = runner_.prefill_chunk(sequence.spec.prompt_ids, sequence.prefilled, count, sequence.slot, logits_.data());
    charge_device(runner_.graphs().prefill(count).key, sequence.prefilled, started);
  } catch (const std::exception& e) {
    spdlog::error("prefill failed: {}", e.what());
    runner_.abandon_prefill(sequence.slot);
    release(sequence, FinishReason::Error, e.what());
    return;
  }
  sequence.prefilled += count;
  ++sequence.next_chunk;
  if (!complete) {
    prefilling_ = std::move(sequence);
    return;
  }
  const int32_t token = sequence.sampler.sample({logits_.data(), static_cast<size_t>(model_.shape.vocab)});
  if (take_token(sequence, logits_.data(), token)) running_.push_back(std::move(sequence));
}

bool Engine::take_token(Sequence& sequence, const float* logits, int32_t token) {
  if (!sequence.spec.ignore_eos && is_end_token(model_.tokenizer, token)) {
    release(sequence, FinishReason::Stop);
    return false;
  }
  TokenEvent event = sequence.spec.top_logprobs >= 0
                         ? token_event({logits, static_cast<size_t>(model_.shape.vocab)}, token, sequence.spec.top_logprobs)
                         : TokenEvent{token, 0.0f, {}, {}};
  if (step_clock_) event.device_at = device_clock_.load();
  sequence.stream->push(std::move(event));
  sequence.next_input = token;
  ++sequence.generated;
  {
    std::lock_guard lock(mutex_);
    ++stats_.generated_tokens;
  }
  if (sequence.generated == sequence.limit) {
    release(sequence, FinishReason::Length);
    return false;
  }
  return true;
}

void Engine::release(Sequence& sequence, FinishReason reason, const std::string& error) {
  // The slot is free, and counted free, before the client learns the request has ended.
  cache_.reset(sequence.slot);
  free_slots_.push_back(sequence.slot);
  publish_slots();
  sequence.stream->finish(reason, error);
  sequence.stream = nullptr;
}

}  // namespace snapstream::runtime
