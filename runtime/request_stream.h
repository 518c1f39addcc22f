// A request's handle, shared by the client that reads tokens and the engine that produces
// them: tokens arrive in order, then exactly one finish reason.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <atomic>
#include <vector>

#include "runtime/sampler.h"

namespace snapstream {

enum class FinishReason : uint8_t { Stop, Length, Cancelled, Error };
std::string_view finish_reason_name(FinishReason reason);

// What a client asks the engine for.
struct RequestSpec {
  std::vector<int32_t> prompt_ids;
  int64_t max_tokens = 256;
  SamplingParams sampling;
};

class RequestStream {
 public:
  // Client side. next() blocks until a token, the end (nullopt) or the timeout (nullopt with
  // finished() still false).
  std::optional<int32_t> next(std::chrono::milliseconds timeout = std::chrono::hours(24 * 365));
  bool finished() const;
  // Asks the engine to stop this request; its slot is freed at the next engine step.
  void cancel() { cancel_requested_.store(true); }
  bool cancel_requested() const { return cancel_requested_.load(); }
  // Valid once finished() is true.
  FinishReason finish_reason() const;
  std::string error() const;
  // Reads every remaining token until the end.
  std::vector<int32_t> collect();

  // Engine side.
  void push(int32_t token);
  void finish(FinishReason reason, std::string error = {});

 private:
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<int32_t> tokens_;
  bool finished_ = false;
  FinishReason reason_ = FinishReason::Error;
  std::string error_;
  std::atomic<bool> cancel_requested_{false};
};

}  // namespace snapstream
