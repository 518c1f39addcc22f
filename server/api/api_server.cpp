// Routing and the small endpoints; completions are handed to completion_job.
#include "server/api/api_server.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <chrono>
#include <nlohmann/json.hpp>

#include "runtime/text_stream.h"
#include "server/api/api_error.h"
#include "server/api/completion_job.h"
#include "server/api/completion_request.h"
#include "server/api/openai_json.h"
#include "server/http/error_body.h"

namespace snapstream::server::api {
namespace {

using json = nlohmann::json;
namespace bhttp = boost::beast::http;

void send_json(const std::shared_ptr<http::Responder>& responder, int status, const json& body) {
  responder->send(status, "application/json", dump(body));
}

void send_error(const std::shared_ptr<http::Responder>& responder, const ApiError& e) {
  http::HeaderList headers;
  if (e.status() == 401) headers.emplace_back("WWW-Authenticate", "Bearer");
  if (e.status() == 429 || e.status() == 503) headers.emplace_back("Retry-After", "1");
  responder->send(e.status(), "application/json", http::error_body(e.status(), e.what(), e.param(), "", e.code()), headers);
}

// Compares without stopping at the first difference, so timing does not reveal the key.
bool constant_time_equal(std::string_view a, std::string_view b) {
  unsigned char difference = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) difference |= static_cast<unsigned char>(a[i] ^ b[i % std::max<size_t>(b.size(), 1)]);
  return difference == 0;
}

// "%2F" and the like back to their characters (clients escape a model id's '/'). Only printable
// ASCII is decoded: any other escape, or a malformed one, stays as written, so what an error
// message echoes is plain text.
std::string percent_decoded(std::string_view text) {
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const int value = text[i] == '%' && i + 2 < text.size() && hex(text[i + 1]) && hex(text[i + 2])
                          ? std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16)
                          : -1;
    if (value >= 0x20 && value < 0x7F) {
      out.push_back(static_cast<char>(value));
      i += 2;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

std::string path_of(const http::Request& request) {
  const std::string_view target(request.target().data(), request.target().size());
  return std::string(target.substr(0, target.find('?')));
}

}  // namespace

ApiServer::ApiServer(runtime::Engine& engine, const runtime::Model& model, ApiOptions options, boost::asio::any_io_executor executor)
    : engine_(engine),
      model_(model),
      options_(std::move(options)),
      executor_(std::move(executor)),
      chat_template_(detect_chat_template(model.chat_template)),
      metrics_(options_.served_model_name, runtime::SlotKvCache::full_cache_bytes(model.shape, 1, engine.cache().config().kv_dtype), engine.step_clock()),
      created_(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()) {}

bool ApiServer::authorized(const http::Request& request) const {
  if (options_.api_key.empty()) return true;
  const auto header = request[bhttp::field::authorization];
  const std::string_view value(header.data(), header.size());
  constexpr std::string_view kBearer = "Bearer ";
  if (value.substr(0, kBearer.size()) != kBearer) return false;
  return constant_time_equal(value.substr(kBearer.size()), options_.api_key);
}

void ApiServer::handle(const http::Request& request, std::shared_ptr<http::Responder> responder) {
  const std::string path = path_of(request);
  const auto method = request.method();
  try {
    if (path == "/health") {
      if (method != bhttp::verb::get) throw ApiError(405, "use GET for /health");
      if (const std::string failure = engine_.failure(); !failure.empty()) throw ApiError(503, failure);
      send_json(responder, 200, {{"status", "ok"}});
      return;
    }
    if (path == "/metrics") {
      if (method != bhttp::verb::get) throw ApiError(405, "use GET for /metrics");
      responder->send(200, "text/plain; version=0.0.4", metrics_.render(engine_.stats(), engine_.cache().slots()));
      return;
    }
    constexpr std::string_view kModelPrefix = "/v1/models/";
    const bool one_model = path.size() > kModelPrefix.size() && path.compare(0, kModelPrefix.size(), kModelPrefix) == 0;
    const bool known = path == "/v1/models" || one_model || path == "/v1/completions" || path == "/v1/chat/completions" ||
                       path == "/tokenize" || path == "/detokenize";
    if (!known) throw ApiError(404, "no route for " + std::string(request.method_string()) + " " + path);
    if (!authorized(request)) throw ApiError(401, "missing or wrong API key; send 'Authorization: Bearer <key>'", "", "invalid_api_key");
    if (path == "/v1/models" || one_model) {
      if (method != bhttp::verb::get) throw ApiError(405, "use GET for " + path);
      const json served{{"id", options_.served_model_name},
                        {"object", "model"},
                        {"created", created_},
                        {"owned_by", "snapstream"},
                        {"max_model_len", model_.shape.context_length}};
      if (!one_model) return send_json(responder, 200, {{"object", "list"}, {"data", json::array({served})}});
      // OpenAI's retrieve-a-model: the id as the client spelled it in the path.
      const std::string id = percent_decoded(std::string_view(path).substr(kModelPrefix.size()));
      if (id != options_.served_model_name)
        throw ApiError(404, "the model '" + id + "' does not exist; this server serves '" + options_.served_model_name + "'", "model",
                       "model_not_found");
      return send_json(responder, 200, served);
    }
    if (method != bhttp::verb::post) throw ApiError(405, "use POST for " + path);
    if (path == "/tokenize") return tokenize(request, responder);
    if (path == "/detokenize") return detokenize(request, responder);
    completions(request, responder, path == "/v1/chat/completions");
  } catch (const ApiError& e) {
    send_error(responder, e);
  }
}

void ApiServer::completions(const http::Request& request, const std::shared_ptr<http::Responder>& responder, bool chat) {
  const ParseContext context{model_.tokenizer, model_.shape.context_length, chat_template_};
  CompletionRequest parsed = parse_completion_request(request.body(), chat ? Endpoint::Chat : Endpoint::Completions, context);
  if (!parsed.model.empty() && parsed.model != options_.served_model_name)
    throw ApiError(404, "the model '" + parsed.model + "' does not exist; this server serves '" + options_.served_model_name + "'",
                   "model", "model_not_found");
  // As vLLM does: clients send extras freely, so they are logged, not refused.
  if (!parsed.ignored_fields.empty()) {
    std::string names;
    for (const auto& name : parsed.ignored_fields) names += (names.empty() ? "'" : ", '") + name + "'";
    spdlog::warn("{}: ignored the fields this server does not know: {}", chat ? "/v1/chat/completions" : "/v1/completions", names);
  }
  start_completion({engine_, model_.tokenizer, options_.served_model_name, metrics_, executor_}, std::move(parsed), responder);
}

void ApiServer::tokenize(const http::Request& request, const std::shared_ptr<http::Responder>& responder) {
  const json body = parse_json_object(request.body());
  // vLLM's and llama.cpp's spellings are both taken: prompt/content, add_special_tokens/add_special.
  auto flag = [&](std::initializer_list<const char*> names, bool fallback) {
    for (const char* name : names)
      if (const auto it = body.find(name); it != body.end()) {
        if (!it->is_boolean()) throw ApiError(400, std::string("'") + name + "' must be true or false", name);
        return it->get<bool>();
      }
    return fallback;
  };
  const bool add_special = flag({"add_special_tokens", "add_special"}, true);
  const bool parse_special = flag({"parse_special"}, true);
  auto text = body.find("prompt");
  if (text == body.end()) text = body.find("content");
  std::vector<int32_t> ids;
  if (text != body.end() && text->is_string()) {
    ids = model_.tokenizer.encode(text->get<std::string>(), add_special, parse_special);
  } else if (body.contains("messages")) {
    json chat = body;
    chat.erase("model");
    ids = parse_completion_request(chat.dump(), Endpoint::Chat, {model_.tokenizer, INT64_MAX, chat_template_}).prompts.front();
  } else {
    throw ApiError(400, "'prompt' (or 'content', a string) or 'messages' is required", "prompt");
  }
  send_json(responder, 200, {{"tokens", ids}, {"count", ids.size()}, {"max_model_len", model_.shape.context_length}});
}

void ApiServer::detokenize(const http::Request& request, const std::shared_ptr<http::Responder>& responder) {
  const json body = parse_json_object(request.body());
  const auto it = body.find("tokens");
  if (it == body.end() || !it->is_array()) throw ApiError(400, "'tokens' (an array of token ids) is required", "tokens");
  std::vector<int32_t> ids;
  for (const auto& id : *it) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= model_.tokenizer.vocab_size())
      throw ApiError(400, "'tokens' must hold ids within 0.." + std::to_string(model_.tokenizer.vocab_size() - 1), "tokens");
    ids.push_back(id.get<int32_t>());
  }
  send_json(responder, 200, {{"prompt", runtime::detokenize(model_.tokenizer, ids)}});
}

void ServingHandler::handle(const http::Request& request, std::shared_ptr<http::Responder> responder) {
  const auto api = std::atomic_load(&api_);
  if (api) {
    api->handle(request, std::move(responder));
    return;
  }
  responder->send(503, "application/json", http::error_body(503, "the model is still loading"), {{"Retry-After", "1"}});
}

}  // namespace snapstream::server::api
