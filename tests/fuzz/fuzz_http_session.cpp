// Fuzz target: arbitrary bytes sent over a real TCP connection to the whole server stack (Beast
// sessions, the HTTP limits, the OpenAI API, the engine on stories260K). Each input is written,
// the sending half closed, and everything the server answers is read until it closes. A crash,
// a sanitizer report or a connection the server never closes (a hang) fails the target.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/asio/io_context.hpp>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>

#include "kernels/thread_pool.h"
#include "runtime/engine.h"
#include "runtime/model.h"
#include "server/api/api_server.h"
#include "server/http/http_server.h"
#include "tests/fuzz/fuzz_support.h"

using namespace snapstream;

namespace {

// The server, built once and kept for the whole run (libFuzzer never returns from its loop).
struct Stack {
  std::unique_ptr<runtime::Model> model;
  std::unique_ptr<kernels::ThreadPool> pool;
  std::unique_ptr<runtime::Engine> engine;
  boost::asio::io_context io;
  std::shared_ptr<server::api::ApiServer> api;
  std::unique_ptr<server::http::HttpServer> http;
  uint16_t port = 0;
  std::thread io_thread;

  Stack() {
    fuzz::quiet_logs();
    model = runtime::load_model((fuzz::models_dir() / "stories260K.gguf").string());
    pool = std::make_unique<kernels::ThreadPool>(1);
    runtime::EngineOptions options;
    options.slots = 2;
    engine = std::make_unique<runtime::Engine>(*model, *pool, options);
    api = std::make_shared<server::api::ApiServer>(*engine, *model, server::api::ApiOptions{"stories260K", ""}, io.get_executor());
    server::http::ServerLimits limits;
    limits.body_bytes = 1 << 16;
    limits.read_timeout = std::chrono::milliseconds(500);
    http = std::make_unique<server::http::HttpServer>(
        io, limits, [this](const server::http::Request& request, std::shared_ptr<server::http::Responder> responder) {
          api->handle(request, std::move(responder));
        });
    port = http->listen("127.0.0.1", 0);
    io_thread = std::thread([this] { io.run(); });
    io_thread.detach();  // runs until the process ends
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Stack* stack = new Stack();  // never destroyed: the io thread uses it to the end
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) __builtin_trap();
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(stack->port);
  int connected = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  if (connected != 0 && errno == EINTR) {
    // libFuzzer's timer signal may interrupt connect(); the connection then completes on its
    // own, and SO_ERROR tells how it ended.
    pollfd writable{fd, POLLOUT, 0};
    while (poll(&writable, 1, 20000) < 0 && errno == EINTR) {
    }
    int error = 0;
    socklen_t length = sizeof error;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    connected = error == 0 ? 0 : -1;
    errno = error;
  }
  if (connected != 0) {
    std::fprintf(stderr, "fuzz_http_session: connect failed: %s\n", std::strerror(errno));
    __builtin_trap();  // the server stopped listening
  }
  // The server may answer and close before it read everything (413, a malformed head): a
  // failed send is then expected, not a finding.
  for (size_t sent = 0; sent < size;) {
    const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  // Whatever was requested (a completion may generate up to the context), the server must close
  // within its read timeout after the last answer; 20 s without a byte or a close is a hang.
  timeval timeout{20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  char buffer[4096];
  for (;;) {
    const ssize_t n = recv(fd, buffer, sizeof buffer, 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) __builtin_trap();  // the server hung
      break;  // reset by the server: it refused the connection's bytes
    }
  }
  // Closing with a reset keeps this side out of TIME_WAIT: at a thousand connections a second,
  // TIME_WAIT sockets used up the ephemeral ports and connect() failed after about 180,000 runs.
  // The exchange is over by now (the answer was read to the server's close, or it reset).
  linger reset{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  close(fd);
  // The next input (or the end of the run) waits until the server is idle again. libFuzzer ends
  // the run with exit() while the io and engine threads live on; work they still did then met
  // the static objects exit destroys (ASan once reported a heap-use-after-free after the final
  // stats). Idle, they sleep in the kernel and touch nothing.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    const runtime::EngineStats stats = stack->engine->stats();
    if (stack->http->connections() == 0 && stats.running == 0 && stats.waiting == 0) break;
    if (std::chrono::steady_clock::now() > deadline) __builtin_trap();  // a connection or request never ended
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return 0;
}
