// A connection's life: read a request, answer it, keep reading meanwhile (a hang-up cancels
// the work for it, a pipelined request waits its turn), then the next one or close.
#include "server/http/session.h"

#include <spdlog/spdlog.h>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <sstream>

#include "server/http/cors.h"
#include "server/http/error_body.h"

namespace snapstream::server::http {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;

namespace {

constexpr uint32_t kHeaderLimit = 64 * 1024;
constexpr size_t kLoggedTargetBytes = 200;

// The responder of one exchange. Everything is formatted on the session's executor, where the
// session's state (keep-alive, HTTP version) may be read.
class ExchangeResponder final : public Responder {
 public:
  // `always` goes on every response of the exchange (the CORS headers).
  ExchangeResponder(std::shared_ptr<Session> session, uint64_t exchange, HeaderList always = {})
      : session_(std::move(session)), exchange_(exchange), always_(std::move(always)) {}

  void send(int status, std::string content_type, std::string body, HeaderList headers) override {
    run([exchange = exchange_, status, content_type, headers, always = always_, body = std::move(body)](Session& s) {
      s.note_status(exchange, status);
      bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(status), s.version()};
      res.set(bhttp::field::server, "snapstream");
      res.set(bhttp::field::content_type, content_type);
      for (const auto& [name, value] : always) res.set(name, value);
      for (const auto& [name, value] : headers) res.set(name, value);
      res.keep_alive(s.keep_alive(exchange));
      res.body() = body;
      res.prepare_payload();
      // A 204 has no body, so none is described (RFC 9110 forbids its Content-Length).
      if (status == 204) {
        res.erase(bhttp::field::content_length);
        res.erase(bhttp::field::content_type);
      }
      std::ostringstream bytes;
      bytes << res;
      s.enqueue(exchange, bytes.str(), true);
    });
  }

  void begin_stream(int status, std::string content_type, HeaderList headers) override {
    run([exchange = exchange_, status, content_type, headers, always = always_](Session& s) {
      s.note_status(exchange, status);
      bhttp::response<bhttp::empty_body> res{static_cast<bhttp::status>(status), s.version()};
      res.set(bhttp::field::server, "snapstream");
      res.set(bhttp::field::content_type, content_type);
      res.set(bhttp::field::cache_control, "no-cache");
      for (const auto& [name, value] : always) res.set(name, value);
      for (const auto& [name, value] : headers) res.set(name, value);
      res.keep_alive(s.keep_alive(exchange));
      res.chunked(true);
      std::ostringstream bytes;
      bytes << res.base();
      s.enqueue(exchange, bytes.str(), false);
    });
  }

  void write(std::string data) override {
    if (data.empty()) return;  // an empty chunk would end the stream
    run([exchange = exchange_, data = std::move(data)](Session& s) {
      std::ostringstream chunk;
      chunk << std::hex << data.size() << "\r\n" << data << "\r\n";
      s.enqueue(exchange, chunk.str(), false);
    });
  }

  void end_stream() override {
    run([exchange = exchange_](Session& s) { s.enqueue(exchange, "0\r\n\r\n", true); });
  }

  void on_disconnect(std::function<void()> callback) override {
    run([exchange = exchange_, callback = std::move(callback)](Session& s) { s.add_disconnect_callback(exchange, callback); });
  }

 private:
  template <typename Action>
  void run(Action action) {
    net::post(session_->executor(), [session = session_, action = std::move(action)]() mutable { action(*session); });
  }

  std::shared_ptr<Session> session_;
  uint64_t exchange_;
  HeaderList always_;
};

bool client_gone(const beast::error_code& ec) {
  return ec == bhttp::error::end_of_stream || ec == net::error::eof || ec == net::error::connection_reset ||
         ec == net::error::operation_aborted || ec == net::error::broken_pipe || ec == net::error::bad_descriptor;
}

// Polled by monitors every few seconds: logged at debug, so the access log shows the traffic.
bool is_probe(std::string_view target) {
  const std::string_view path = target.substr(0, target.find('?'));
  return path == "/health" || path == "/metrics";
}

std::string remote_address(const net::ip::tcp::socket& socket) {
  beast::error_code ec;
  const auto endpoint = socket.remote_endpoint(ec);
  if (ec) return "-";
  return (endpoint.address().is_v6() ? "[" + endpoint.address().to_string() + "]" : endpoint.address().to_string()) + ":" +
         std::to_string(endpoint.port());
}

}  // namespace

Session::Session(net::ip::tcp::socket socket, const ServerLimits& limits, const Handler& handler,
                 std::shared_ptr<std::atomic<int64_t>> connections)
    : remote_(remote_address(socket)),
      stream_(std::move(socket)),
      idle_timer_(stream_.get_executor()),
      limits_(limits),
      handler_(handler),
      connections_(std::move(connections)) {
  ++*connections_;
}

Session::~Session() { --*connections_; }

void Session::start() {
  net::post(executor(), [self = shared_from_this()] {
    self->arm_idle_timer();
    self->read_next();
  });
}

void Session::close(bool when_idle) {
  net::post(executor(), [self = shared_from_this(), when_idle] {
    if (when_idle && self->state_ == State::Answering) {
      if (self->after_response_ != AfterResponse::Linger) self->after_response_ = AfterResponse::Close;
    } else {
      self->shutdown();
    }
  });
}

void Session::read_next() {
  if (state_ == State::Closed) return;
  parser_.emplace();
  parser_->body_limit(limits_.body_bytes);
  parser_->header_limit(kHeaderLimit);
  bhttp::async_read(stream_, buffer_, *parser_,
                    [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
}

void Session::on_read(beast::error_code ec) {
  if (state_ == State::Closed) return;
  if (ec == bhttp::error::body_limit) {
    reject(413, "the request body exceeds the limit of " + std::to_string(limits_.body_bytes) + " bytes");
    return;
  }
  if (ec && client_gone(ec)) {
    lost_client();
    return;
  }
  if (ec) {
    reject(400, "malformed HTTP request: " + ec.message());
    return;
  }
  Request request = parser_->release();
  if (state_ == State::Answering)
    held_ = std::move(request);  // answered after the current one; reading pauses until then
  else
    dispatch(std::move(request));
}

void Session::dispatch(Request request) {
  ++exchange_;
  state_ = State::Answering;
  const std::string_view target(request.target().data(), request.target().size());
  // A target may be as long as the header limit; the log keeps its start.
  const std::string shown = std::string(target.substr(0, kLoggedTargetBytes)) + (target.size() > kLoggedTargetBytes ? "..." : "");
  exchange_log_ = {std::string(request.method_string()) + " " + shown, is_probe(target), std::chrono::steady_clock::now(), 0};
  idle_timer_.cancel();
  keep_alive_ = request.keep_alive();
  version_ = request.version();
  on_disconnect_.clear();
  HeaderList cors = cors_headers(limits_.allowed_origins, request);
  auto responder = std::make_shared<ExchangeResponder>(shared_from_this(), exchange_, cors);
  try {
    // Answered here, before the handler: a browser sends no API key with a preflight.
    if (!cors.empty() && is_preflight(request))
      responder->send(204, "text/plain", "", preflight_headers(request));
    else
      handler_(request, responder);
  } catch (const std::exception& e) {
    spdlog::error("request handler failed: {}", e.what());
    responder->send(500, "application/json", error_body(500, std::string("internal error: ") + e.what()), {});
  }
  read_next();
}

void Session::reject(unsigned status, const std::string& message) {
  // The request could not be read whole, so the connection cannot carry another.
  keep_alive_ = false;
  after_response_ = AfterResponse::Linger;
  if (state_ == State::Answering) return;  // refused once the current answer is out
  ++exchange_;
  state_ = State::Answering;
  exchange_log_ = {"(request not read whole)", false, std::chrono::steady_clock::now(), 0};
  idle_timer_.cancel();
  ExchangeResponder(shared_from_this(), exchange_)
      .send(static_cast<int>(status), "application/json", error_body(static_cast<int>(status), message), {});
}

void Session::enqueue(uint64_t exchange, std::string bytes, bool ends_response) {
  if (exchange != exchange_ || state_ == State::Closed) return;
  out_.push_back({std::move(bytes), ends_response});
  if (!writing_) write_front();
}

void Session::write_front() {
  writing_ = true;
  net::async_write(stream_, net::buffer(out_.front().bytes), [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (self->state_ == State::Closed) return;
    if (ec) {
      self->writing_ = false;
      self->lost_client();
      return;
    }
    const bool ends = self->out_.front().ends_response;
    self->out_.pop_front();
    if (ends) self->response_done();
    if (!self->out_.empty() && self->state_ != State::Closed)
      self->write_front();
    else
      self->writing_ = false;
  });
}

void Session::note_status(uint64_t exchange, int status) {
  if (exchange == exchange_) exchange_log_.status = status;
}

void Session::log_exchange(std::string_view outcome) const {
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - exchange_log_.started).count();
  spdlog::log(exchange_log_.probe ? spdlog::level::debug : spdlog::level::info, "{} \"{}\" {}{} {:.1f} ms", remote_,
              exchange_log_.request_line, exchange_log_.status, outcome, ms);
}

void Session::response_done() {
  log_exchange("");
  on_disconnect_.clear();
  if (after_response_ == AfterResponse::Linger) {
    linger();
    return;
  }
  if (!keep_alive_ || after_response_ == AfterResponse::Close) {
    shutdown();
    return;
  }
  state_ = State::Idle;
  if (held_) {
    Request next = std::move(*held_);
    held_.reset();
    dispatch(std::move(next));
    return;
  }
  arm_idle_timer();
}

void Session::add_disconnect_callback(uint64_t exchange, std::function<void()> callback) {
  if (exchange != exchange_) return;
  if (state_ == State::Closed) {  // the client left before the handler asked: cancel its work now
    callback();
    return;
  }
  on_disconnect_.push_back(std::move(callback));
}

void Session::lost_client() {
  if (state_ == State::Closed) return;
  if (state_ == State::Answering) log_exchange(" (the client left before the end)");
  auto callbacks = std::move(on_disconnect_);
  on_disconnect_.clear();
  shutdown();
  for (auto& callback : callbacks) callback();
}

void Session::arm_idle_timer() {
  idle_timer_.expires_after(limits_.read_timeout);
  const uint64_t exchange = exchange_;
  idle_timer_.async_wait([self = shared_from_this(), exchange](beast::error_code ec) {
    // Still idle, with no new request since the timer was set: a slow or stalled client.
    if (!ec && self->state_ == State::Idle && self->exchange_ == exchange) self->shutdown();
  });
}

void Session::linger() {
  // The client may still be sending the body we refused; closing now would reset the
  // connection and could destroy the error response in flight. Stop sending, discard what
  // arrives for a moment, then close.
  state_ = State::Lingering;
  beast::error_code ignored;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_send, ignored);
  idle_timer_.expires_after(std::chrono::seconds(2));
  idle_timer_.async_wait([self = shared_from_this()](beast::error_code) { self->shutdown(); });
  discard();
}

void Session::discard() {
  if (state_ == State::Closed) return;
  stream_.socket().async_read_some(net::buffer(discard_buffer_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
    if (ec)
      self->shutdown();
    else
      self->discard();
  });
}

void Session::shutdown() {
  if (state_ == State::Closed) return;
  state_ = State::Closed;
  idle_timer_.cancel();
  beast::error_code ignored;
  stream_.socket().shutdown(net::ip::tcp::socket::shutdown_both, ignored);
  stream_.close();
  out_.clear();
}

}  // namespace snapstream::server::http
