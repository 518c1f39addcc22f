// CORS as vLLM's and llama.cpp's servers apply it: any origin by default, or a list.
#include "server/http/cors.h"

#include <algorithm>

namespace snapstream::server::http {
namespace bhttp = boost::beast::http;

HeaderList cors_headers(const std::vector<std::string>& allowed, const Request& request) {
  const auto origin = request.find(bhttp::field::origin);
  if (origin == request.end()) return {};
  if (std::find(allowed.begin(), allowed.end(), "*") != allowed.end()) return {{"Access-Control-Allow-Origin", "*"}};
  const std::string asked(origin->value());
  if (std::find(allowed.begin(), allowed.end(), asked) == allowed.end()) return {};
  // The answer differs by origin, so a cache between must not hand one origin's to another.
  return {{"Access-Control-Allow-Origin", asked}, {"Vary", "Origin"}};
}

bool is_preflight(const Request& request) {
  return request.method() == bhttp::verb::options && request.find(bhttp::field::origin) != request.end() &&
         request.find(bhttp::field::access_control_request_method) != request.end();
}

HeaderList preflight_headers(const Request& request) {
  const auto asked = request.find(bhttp::field::access_control_request_headers);
  return {{"Access-Control-Allow-Methods", "GET, POST, OPTIONS"},
          {"Access-Control-Allow-Headers", asked == request.end() ? std::string("Authorization, Content-Type") : std::string(asked->value())},
          {"Access-Control-Max-Age", "600"}};
}

}  // namespace snapstream::server::http
