// The producer/consumer hand-off of one request's tokens.
#include "runtime/request_stream.h"

namespace snapstream::runtime {

std::string_view finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Cancelled: return "cancelled";
    case FinishReason::Error: return "error";
  }
  return "error";
}

std::optional<int32_t> RequestStream::next(std::chrono::milliseconds timeout) {
  const auto event = next_event(timeout);
  if (!event) return std::nullopt;
  return event->id;
}

std::optional<TokenEvent> RequestStream::next_event(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  // A zero timeout is a poll: waiting on the condition variable would still cost a futex call
  // and make every later push() wake this reader in the kernel.
  if (timeout > std::chrono::milliseconds(0)) ready_.wait_for(lock, timeout, [this] { return !tokens_.empty() || finished_; });
  if (tokens_.empty()) return std::nullopt;
  TokenEvent token = std::move(tokens_.front());
  tokens_.pop_front();
  return token;
}

std::optional<std::chrono::steady_clock::time_point> RequestStream::admitted_at() const {
  std::lock_guard lock(mutex_);
  return admitted_at_;
}

void RequestStream::mark_admitted() {
  std::lock_guard lock(mutex_);
  admitted_at_ = std::chrono::steady_clock::now();
}

bool RequestStream::finished() const {
  std::lock_guard lock(mutex_);
  return finished_ && tokens_.empty();
}

FinishReason RequestStream::finish_reason() const {
  std::lock_guard lock(mutex_);
  return reason_;
}

std::string RequestStream::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

std::vector<int32_t> RequestStream::collect() {
  std::vector<int32_t> tokens;
  while (const auto token = next()) tokens.push_back(*token);
  return tokens;
}

void RequestStream::set_listener(std::function<void()> listener, ListenFor when) {
  bool pending = false, ended = false;
  {
    std::lock_guard lock(mutex_);
    listener_ = std::move(listener);
    listen_for_ = when;
    ended = finished_;
    pending = ended || (when == ListenFor::EveryToken && !tokens_.empty());
  }
  if (pending) notify(ended);
}

void RequestStream::notify(bool at_end) {
  ready_.notify_all();
  std::function<void()> listener;
  {
    std::lock_guard lock(mutex_);
    if (at_end || listen_for_ == ListenFor::EveryToken) listener = listener_;
  }
  if (listener) listener();
}

void RequestStream::push(TokenEvent token) {
  token.at = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mutex_);
    tokens_.push_back(std::move(token));
  }
  notify(false);
}

void RequestStream::finish(FinishReason reason, std::string error) {
  {
    std::lock_guard lock(mutex_);
    if (finished_) return;
    finished_ = true;
    reason_ = reason;
    error_ = std::move(error);
  }
  notify(true);
}

}  // namespace snapstream::runtime
