// How a request handler answers: once with a whole response, or as a chunked stream (SSE).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace snapstream::server::http {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// Thread-safe: any thread may call it, and the bytes go out on the connection's own executor
// in call order. Calls after the response is complete, or after the client left, do nothing.
class Responder {
 public:
  virtual ~Responder() = default;
  virtual void send(int status, std::string content_type, std::string body, HeaderList headers = {}) = 0;
  virtual void begin_stream(int status, std::string content_type, HeaderList headers = {}) = 0;
  virtual void write(std::string data) = 0;
  virtual void end_stream() = 0;
  // `callback` runs once if the client goes away before the response is complete (at once if
  // it already has), on the connection's executor.
  virtual void on_disconnect(std::function<void()> callback) = 0;
};

}  // namespace snapstream::server::http
