// Cross-origin access for browser clients (CORS): the headers that let a page from an admitted
// origin read a response, and the answer to a browser's preflight.
#pragma once

#include <string>
#include <vector>

#include "server/http/http_server.h"

namespace snapstream::server::http {

// The headers for the response to `request`: none unless it names an Origin that `allowed`
// admits ("*" admits any, and is what the header then says; a listed origin is echoed).
HeaderList cors_headers(const std::vector<std::string>& allowed, const Request& request);

// A preflight: OPTIONS with an Origin and an Access-Control-Request-Method.
bool is_preflight(const Request& request);

// What an admitted preflight is answered with besides cors_headers: the methods, the headers it
// asked to send, and how long a browser may reuse the answer.
HeaderList preflight_headers(const Request& request);

}  // namespace snapstream::server::http
