// A request's handle, shared by the client that reads tokens and the engine that produces
// them: tokens arrive in order, then exactly one finish reason.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <atomic>
#include <vector>

#include "runtime/sampler.h"

namespace snapstream::runtime {

enum class FinishReason : uint8_t { Stop, Length, Cancelled, Error };

// When a stream's listener runs: after every token, or only once the stream has finished (a
// client that reads everything at the end saves a wake-up per token).
enum class ListenFor : uint8_t { EveryToken, End };
std::string_view finish_reason_name(FinishReason reason);

// What a client asks the engine for.
struct RequestSpec {
  std::vector<int32_t> prompt_ids;
  int64_t max_tokens = 256;
  SamplingParams sampling;
  int64_t top_logprobs = -1;      // report each token's log-probability and this many alternatives; -1: none
  // End-of-generation tokens are generated as any other token (their text is empty), so only
  // max_tokens ends the sequence: completions of a known length, for benchmarks and tests.
  bool ignore_eos = false;
};

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0.0f;
};

// One generated token; logprob and top are filled when the request asked for them.
struct TokenEvent {
  int32_t id = 0;
  float logprob = 0.0f;            // under the model's distribution (before temperature or cuts)
  std::vector<TokenLogprob> top;   // the most likely alternatives, most likely first
  std::chrono::steady_clock::time_point at{};  // when the engine produced it
  double device_at = -1.0;  // the emulated device's clock when it produced it; -1: no emulation
};

class RequestStream {
 public:
  // Client side. next() blocks until a token, the end (nullopt) or the timeout (nullopt with
  // finished() still false).
  std::optional<int32_t> next(std::chrono::milliseconds timeout = std::chrono::hours(24 * 365));
  std::optional<TokenEvent> next_event(std::chrono::milliseconds timeout = std::chrono::hours(24 * 365));
  // When the engine gave the request a slot (its queue time ends); empty while it waits.
  std::optional<std::chrono::steady_clock::time_point> admitted_at() const;
  // The emulated device's clock when the request was submitted; -1 without emulation.
  double device_submitted_at() const { return device_submitted_at_; }
  bool finished() const;
  // Asks the engine to stop this request; its slot is freed at the next engine step.
  void cancel() { cancel_requested_.store(true); }
  bool cancel_requested() const { return cancel_requested_.load(); }
  // Valid once finished() is true.
  FinishReason finish_reason() const;
  std::string error() const;
  // Reads every remaining token until the end.
  std::vector<int32_t> collect();
  // Event-driven clients (the HTTP server): `listener` runs on the engine thread after every
  // token (ListenFor::EveryToken only) and at the end, and at once if what it listens for is
  // already there. It must only hand the news on (post to an event loop); the client then
  // drains with next(0ms).
  void set_listener(std::function<void()> listener, ListenFor when = ListenFor::EveryToken);

  // Engine side.
  void push(int32_t token) { push(TokenEvent{token, 0.0f, {}, {}}); }
  void push(TokenEvent token);
  void mark_admitted();
  // Set once, by submit(), before the stream is shared.
  void set_device_submitted_at(double seconds) { device_submitted_at_ = seconds; }
  void finish(FinishReason reason, std::string error = {});

 private:
  // Wakes blocked readers and runs the listener if it listens for this news.
  void notify(bool at_end);

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<TokenEvent> tokens_;
  std::optional<std::chrono::steady_clock::time_point> admitted_at_;
  bool finished_ = false;
  FinishReason reason_ = FinishReason::Error;
  std::string error_;
  std::atomic<bool> cancel_requested_{false};
  double device_submitted_at_ = -1.0;
  std::function<void()> listener_;  // guarded by mutex_, as is listen_for_
  ListenFor listen_for_ = ListenFor::EveryToken;
};

}  // namespace snapstream::runtime
