// One completion request in flight: its engine streams (one per prompt) turned into text, with
// stop strings applied, answered as one JSON body or as server-sent events.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <string>

#include "runtime/engine.h"
#include "server/api/completion_request.h"
#include "server/api/metrics.h"
#include "server/http/responder.h"

namespace snapstream::server::api {

struct JobContext {
  runtime::Engine& engine;
  const runtime::Tokenizer& tokenizer;
  std::string model_name;
  Metrics& metrics;
  boost::asio::any_io_executor executor;  // where the job's own work runs, one step at a time
};

// Submits the request to the engine and answers through `responder` as tokens come. Throws
// ApiError when the engine refuses it (400, or 429 when the waiting queue is full); nothing is
// submitted then.
void start_completion(const JobContext& context, CompletionRequest request, std::shared_ptr<http::Responder> responder);

}  // namespace snapstream::server::api
