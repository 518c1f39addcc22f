// The HTTP/1.1 front door on Boost.Beast: asynchronous connections with keep-alive, a body-size
// limit (413), a read timeout for slow or stalled clients, a connection limit, and disconnect
// detection while a response is being produced.
#pragma once

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/http/responder.h"

namespace snapstream::server::http {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Handler = std::function<void(const Request&, std::shared_ptr<Responder>)>;

struct ServerLimits {
  uint64_t body_bytes = 8u << 20;                   // larger bodies get 413
  std::chrono::milliseconds read_timeout{30000};    // to receive a whole request, and idle keep-alive
  int64_t max_connections = 512;                    // more are answered 503 and closed
  // Origins whose browser pages may read responses (CORS, see cors.h): "*" any, empty none.
  std::vector<std::string> allowed_origins{"*"};
};

class Session;

class HttpServer {
 public:
  HttpServer(boost::asio::io_context& io, ServerLimits limits, Handler handler);
  ~HttpServer();

  // Binds and starts accepting; returns the bound port (useful with port 0). Throws
  // std::system_error when the address cannot be bound.
  uint16_t listen(const std::string& host, uint16_t port);
  // Stops accepting and closes connections that are not in the middle of a response.
  void stop_accepting();
  // Closes every connection, finished or not.
  void close_all();
  int64_t connections() const { return connections_->load(); }

 private:
  void accept();

  boost::asio::io_context& io_;
  ServerLimits limits_;
  Handler handler_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<std::atomic<int64_t>> connections_;
  std::mutex sessions_mutex_;
  std::vector<std::weak_ptr<Session>> sessions_;
};

}  // namespace snapstream::server::http
