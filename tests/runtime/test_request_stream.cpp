// The token hand-off between engine and client: polling never blocks, and a listener runs for
// the news it asked for.
#include <catch2/catch.hpp>

#include <chrono>

#include "runtime/request_stream.h"

using snapstream::runtime::FinishReason;
using snapstream::runtime::ListenFor;
using snapstream::runtime::RequestStream;

TEST_CASE("a zero-timeout read returns at once with what is there", "[request_stream]") {
  RequestStream stream;
  const auto start = std::chrono::steady_clock::now();
  CHECK_FALSE(stream.next(std::chrono::milliseconds(0)).has_value());
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(1));
  CHECK_FALSE(stream.finished());
  stream.push(7);
  CHECK(stream.next(std::chrono::milliseconds(0)) == 7);
  stream.finish(FinishReason::Length);
  CHECK_FALSE(stream.next(std::chrono::milliseconds(0)).has_value());
  CHECK(stream.finished());
}

TEST_CASE("a listener for every token runs per token and at the end", "[request_stream]") {
  RequestStream stream;
  int calls = 0;
  stream.set_listener([&calls] { ++calls; });
  stream.push(1);
  stream.push(2);
  CHECK(calls == 2);
  stream.finish(FinishReason::Stop);
  CHECK(calls == 3);
  stream.finish(FinishReason::Error);  // a second finish is ignored
  CHECK(calls == 3);
  CHECK(stream.finish_reason() == FinishReason::Stop);
}

TEST_CASE("a listener for the end runs once the stream finishes, tokens still readable", "[request_stream]") {
  RequestStream stream;
  int calls = 0;
  stream.push(1);
  stream.set_listener([&calls] { ++calls; }, ListenFor::End);
  CHECK(calls == 0);  // a waiting token is no news for it
  stream.push(2);
  CHECK(calls == 0);
  stream.finish(FinishReason::Length);
  CHECK(calls == 1);
  CHECK(stream.collect() == std::vector<int32_t>{1, 2});

  RequestStream ended;
  ended.push(3);
  ended.finish(FinishReason::Length);
  int late_calls = 0;
  ended.set_listener([&late_calls] { ++late_calls; }, ListenFor::End);
  CHECK(late_calls == 1);  // set after the end: runs at once
}
