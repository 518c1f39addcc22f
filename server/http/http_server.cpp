// Accepting connections and keeping track of them for shutdown.
#include "server/http/http_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/write.hpp>
#include <sstream>

#include "server/http/error_body.h"
#include "server/http/session.h"

namespace snapstream::server::http {
namespace net = boost::asio;
namespace bhttp = boost::beast::http;
using tcp = net::ip::tcp;

HttpServer::HttpServer(net::io_context& io, ServerLimits limits, Handler handler)
    : io_(io),
      limits_(limits),
      handler_(std::move(handler)),
      acceptor_(net::make_strand(io)),
      connections_(std::make_shared<std::atomic<int64_t>>(0)) {}

HttpServer::~HttpServer() { close_all(); }

uint16_t HttpServer::listen(const std::string& host, uint16_t port) {
  const tcp::endpoint endpoint{net::ip::make_address(host), port};
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(net::socket_base::reuse_address(true));
  acceptor_.bind(endpoint);
  acceptor_.listen(net::socket_base::max_listen_connections);
  accept();
  return acceptor_.local_endpoint().port();
}

void HttpServer::accept() {
  acceptor_.async_accept(net::make_strand(io_), [this](boost::beast::error_code ec, tcp::socket socket) {
    if (ec) {
      if (ec != net::error::operation_aborted) spdlog::warn("accept failed: {}", ec.message());
      if (!acceptor_.is_open()) return;
      accept();
      return;
    }
    if (connections_->load() >= limits_.max_connections) {
      // Over the limit: say so and hang up, without a session.
      bhttp::response<bhttp::string_body> res{bhttp::status::service_unavailable, 11};
      res.set(bhttp::field::content_type, "application/json");
      res.set(bhttp::field::retry_after, "1");
      res.keep_alive(false);
      res.body() = error_body(503, "too many connections (" + std::to_string(limits_.max_connections) + "); retry later");
      res.prepare_payload();
      std::ostringstream bytes;
      bytes << res;
      boost::beast::error_code ignored;
      net::write(socket, net::buffer(bytes.str()), ignored);
      socket.shutdown(tcp::socket::shutdown_both, ignored);
    } else {
      auto session = std::make_shared<Session>(std::move(socket), limits_, handler_, connections_);
      {
        std::lock_guard lock(sessions_mutex_);
        std::erase_if(sessions_, [](const std::weak_ptr<Session>& s) { return s.expired(); });
        sessions_.push_back(session);
      }
      session->start();
    }
    accept();
  });
}

void HttpServer::stop_accepting() {
  net::post(acceptor_.get_executor(), [this] {
    boost::beast::error_code ignored;
    acceptor_.close(ignored);
  });
  std::lock_guard lock(sessions_mutex_);
  for (auto& weak : sessions_)
    if (auto session = weak.lock()) session->close(true);
}

void HttpServer::close_all() {
  std::lock_guard lock(sessions_mutex_);
  for (auto& weak : sessions_)
    if (auto session = weak.lock()) session->close(false);
  sessions_.clear();
}

}  // namespace snapstream::server::http
