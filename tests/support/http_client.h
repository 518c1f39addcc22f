// A plain blocking HTTP/1.1 client over TCP for end-to-end tests: whole requests and
// responses as bytes, so tests can send anything (truncated JSON, invalid UTF-8, huge bodies).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace snapstream::test {

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // names lower-cased
  std::string body;                             // de-chunked
};

// One client connection, for tests about connections themselves (keep-alive, pipelining,
// timeouts, limits).
class TcpConnection {
 public:
  explicit TcpConnection(int port);
  ~TcpConnection();
  TcpConnection(const TcpConnection&) = delete;
  TcpConnection& operator=(const TcpConnection&) = delete;

  void send(const std::string& bytes);
  // Reads one whole response; the bytes after it stay for the next call.
  HttpReply read_reply();
  // Reads a streamed response until `events` SSE data events arrived (or it ended).
  std::vector<std::string> first_events(int events);
  // True when the server closes the connection within `milliseconds`.
  bool closed_within(int milliseconds);

 private:
  bool receive();
  int fd_ = -1;
  std::string buffer_;
};

// Sends `raw` (a complete request, or anything) and reads one response until it is complete
// or the server closes. Throws std::runtime_error on connection errors.
HttpReply send_raw(int port, const std::string& raw);

// A POST or GET with a JSON body (empty: none) and extra header lines ("Name: value").
HttpReply http_call(int port, const std::string& method, const std::string& target, const std::string& body = "",
                    const std::vector<std::string>& headers = {});

// The JSON payloads of an SSE body's "data:" events, [DONE] included as the text "[DONE]".
std::vector<std::string> sse_events(const std::string& body);

// Starts a streaming request, reads until `events` data events arrived, then hangs up.
// Returns the events read.
std::vector<std::string> read_then_hang_up(int port, const std::string& target, const std::string& body, int events);

}  // namespace snapstream::test
