// The OpenAI-style error body every error response of the server carries, the HTTP layer's own
// (413, 400, 503) included: {"error": {"message", "type", "param", "code"}}.
#pragma once

#include <string>

namespace snapstream::server::http {

// `type` defaults to the OpenAI type for the status (invalid_request_error, authentication_error,
// not_found_error, rate_limit_error, server_error...); `param` empty means null.
std::string error_body(int status, const std::string& message, const std::string& param = "", const std::string& type = "",
                       const std::string& code = "");
std::string error_type_for(int status);

}  // namespace snapstream::server::http
