// OpenAI-style error bodies.
#include "server/http/error_body.h"

#include <nlohmann/json.hpp>

namespace snapstream::server::http {

std::string error_type_for(int status) {
  switch (status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "invalid_request_error";
    case 429: return "rate_limit_error";
    case 503: return "service_unavailable_error";
    default: return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

std::string error_body(int status, const std::string& message, const std::string& param, const std::string& type,
                       const std::string& code) {
  nlohmann::json error = {{"message", message},
                          {"type", type.empty() ? error_type_for(status) : type},
                          {"param", param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param)},
                          {"code", code.empty() ? nlohmann::json(status) : nlohmann::json(code)}};
  // Invalid UTF-8 from a request must not make the error itself unprintable.
  return nlohmann::json{{"error", error}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace snapstream::server::http
