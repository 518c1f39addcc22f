// CORS headers: which requests get them, what a preflight is answered with.
#include <catch2/catch.hpp>

#include "server/http/cors.h"

using namespace snapstream::server::http;
namespace bhttp = boost::beast::http;

namespace {
Request request(bhttp::verb method, std::vector<std::pair<bhttp::field, std::string>> fields) {
  Request r{method, "/v1/completions", 11};
  for (const auto& [field, value] : fields) r.set(field, value);
  return r;
}
}  // namespace

TEST_CASE("a response gets CORS headers only for an admitted Origin", "[cors]") {
  const auto from_ui = request(bhttp::verb::post, {{bhttp::field::origin, "http://ui.example"}});
  CHECK(cors_headers({"*"}, from_ui) == HeaderList{{"Access-Control-Allow-Origin", "*"}});
  CHECK(cors_headers({"http://other", "http://ui.example"}, from_ui) ==
        HeaderList{{"Access-Control-Allow-Origin", "http://ui.example"}, {"Vary", "Origin"}});
  CHECK(cors_headers({"http://other"}, from_ui).empty());
  CHECK(cors_headers({}, from_ui).empty());
  // An origin is compared whole: no prefix or port matching.
  CHECK(cors_headers({"http://ui.example:8080"}, from_ui).empty());
  CHECK(cors_headers({"*"}, request(bhttp::verb::post, {})).empty());
}

TEST_CASE("a preflight is OPTIONS with Origin and a requested method, answered with what it asked", "[cors]") {
  const auto preflight = request(bhttp::verb::options, {{bhttp::field::origin, "http://ui.example"},
                                                        {bhttp::field::access_control_request_method, "POST"},
                                                        {bhttp::field::access_control_request_headers, "authorization, x-stainless-os"}});
  CHECK(is_preflight(preflight));
  CHECK_FALSE(is_preflight(request(bhttp::verb::options, {{bhttp::field::origin, "http://ui.example"}})));
  CHECK_FALSE(is_preflight(request(bhttp::verb::post, {{bhttp::field::origin, "http://ui.example"},
                                                      {bhttp::field::access_control_request_method, "POST"}})));
  const HeaderList answer = preflight_headers(preflight);
  CHECK(answer == HeaderList{{"Access-Control-Allow-Methods", "GET, POST, OPTIONS"},
                             {"Access-Control-Allow-Headers", "authorization, x-stainless-os"},
                             {"Access-Control-Max-Age", "600"}});
  const auto plain = request(bhttp::verb::options, {{bhttp::field::origin, "http://ui.example"},
                                                    {bhttp::field::access_control_request_method, "GET"}});
  CHECK(preflight_headers(plain)[1].second == "Authorization, Content-Type");
}
