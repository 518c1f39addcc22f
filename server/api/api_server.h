// The OpenAI-compatible API over the engine: routing, authentication and the endpoints
// (completions, chat completions, models, health, metrics, tokenize, detokenize).
#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <memory>
#include <string>

#include "runtime/engine.h"
#include "runtime/model.h"
#include "server/api/chat_template.h"
#include "server/api/metrics.h"
#include "server/http/http_server.h"

namespace snapstream::server::api {

struct ApiOptions {
  std::string served_model_name;  // the name clients use in "model"
  std::string api_key;            // empty: no authentication
};

class ApiServer {
 public:
  ApiServer(runtime::Engine& engine, const runtime::Model& model, ApiOptions options, boost::asio::any_io_executor executor);

  void handle(const http::Request& request, std::shared_ptr<http::Responder> responder);
  const ChatTemplate& chat_template() const { return chat_template_; }

 private:
  void completions(const http::Request& request, const std::shared_ptr<http::Responder>& responder, bool chat);
  void tokenize(const http::Request& request, const std::shared_ptr<http::Responder>& responder);
  void detokenize(const http::Request& request, const std::shared_ptr<http::Responder>& responder);
  bool authorized(const http::Request& request) const;

  runtime::Engine& engine_;
  const runtime::Model& model_;
  ApiOptions options_;
  boost::asio::any_io_executor executor_;
  ChatTemplate chat_template_;
  Metrics metrics_;
  int64_t created_;
};

// Answers every request with 503 until the model is loaded, then hands them to the API.
class ServingHandler {
 public:
  void handle(const http::Request& request, std::shared_ptr<http::Responder> responder);
  void set_api(std::shared_ptr<ApiServer> api) { std::atomic_store(&api_, std::move(api)); }

 private:
  std::shared_ptr<ApiServer> api_;
};

}  // namespace snapstream::server::api
