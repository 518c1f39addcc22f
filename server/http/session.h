// One client connection: reads requests, hands each to the handler, writes what the handler
// answers, and keeps reading meanwhile so a client that hangs up is noticed at once.
#pragma once

#include <array>
#include <chrono>
#include <atomic>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/http_server.h"

namespace snapstream::server::http {

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(boost::asio::ip::tcp::socket socket, const ServerLimits& limits, const Handler& handler,
          std::shared_ptr<std::atomic<int64_t>> connections);
  ~Session();

  void start();
  // Closes the connection now, or once the response in progress is complete (`when_idle`).
  void close(bool when_idle);

  // Used by the responder of the current exchange; `exchange` tells stale callers apart.
  void enqueue(uint64_t exchange, std::string bytes, bool ends_response);
  void add_disconnect_callback(uint64_t exchange, std::function<void()> callback);
  bool keep_alive(uint64_t exchange) const { return exchange == exchange_ && keep_alive_; }
  unsigned version() const { return version_; }
  // The status the current exchange answers with, for the access log.
  void note_status(uint64_t exchange, int status);
  boost::asio::any_io_executor executor() { return stream_.get_executor(); }

 private:
  void read_next();
  void on_read(boost::beast::error_code ec);
  void dispatch(Request request);
  void reject(unsigned status, const std::string& message);
  void write_front();
  void response_done();
  void lost_client();
  void arm_idle_timer();
  void linger();
  void discard();
  void shutdown();
  // One access-log line for the current exchange: who, what, its status, how long; `outcome`
  // says how it ended when not whole.
  void log_exchange(std::string_view outcome) const;

  std::string remote_;  // the client's address:port, for the access log
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  boost::asio::steady_timer idle_timer_;
  const ServerLimits& limits_;
  const Handler& handler_;
  std::shared_ptr<std::atomic<int64_t>> connections_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  std::optional<Request> held_;  // a request that arrived while another was being answered

  // Where the connection is. Reading goes on while Answering, so that a hang-up is seen at once
  // and a pipelined request is held for its turn.
  enum class State {
    Idle,       // waiting for a request; the idle timer runs
    Answering,  // a response is in progress
    Lingering,  // a refused request is answered; what the client still sends is discarded, then close
    Closed,
  };
  // What follows the response in progress.
  enum class AfterResponse {
    NextRequest,  // keep the connection for the next request (if the request asked for keep-alive)
    Close,        // close it: the server is shutting down
    Linger,       // a request could not be read whole: linger, then close
  };
  State state_ = State::Idle;
  AfterResponse after_response_ = AfterResponse::NextRequest;
  uint64_t exchange_ = 0;  // counts requests; the current one's responder carries its number
  bool keep_alive_ = true; // the current request's wish
  std::array<char, 4096> discard_buffer_{};
  unsigned version_ = 11;
  struct Pending {
    std::string bytes;
    bool ends_response;
  };
  std::deque<Pending> out_;
  bool writing_ = false;
  std::vector<std::function<void()>> on_disconnect_;
  struct ExchangeLog {
    std::string request_line;  // "POST /v1/completions"
    bool probe = false;        // /health or /metrics: logged at debug
    std::chrono::steady_clock::time_point started;
    int status = 0;            // 0 until the handler answers
  };
  ExchangeLog exchange_log_;
};

}  // namespace snapstream::server::http
