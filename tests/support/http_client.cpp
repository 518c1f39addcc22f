// Blocking sockets and a minimal response reader (Content-Length, chunked, or until close).
#include "tests/support/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

namespace snapstream::test {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Parses as much of `raw` as is there; `complete` tells whether the body is whole.
HttpReply parse(const std::string& raw, bool& complete) {
  HttpReply reply;
  complete = false;
  const size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return reply;
  const std::string head = raw.substr(0, head_end);
  reply.status = std::stoi(head.substr(head.find(' ') + 1, 3));
  size_t line = head.find("\r\n");
  while (line != std::string::npos) {
    const size_t next = head.find("\r\n", line + 2);
    const std::string field = head.substr(line + 2, next == std::string::npos ? std::string::npos : next - line - 2);
    const size_t colon = field.find(':');
    if (colon != std::string::npos) {
      std::string value = field.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      reply.headers[lower(field.substr(0, colon))] = value;
    }
    line = next;
  }
  const std::string rest = raw.substr(head_end + 4);
  if (lower(reply.headers["transfer-encoding"]) == "chunked") {
    size_t at = 0;
    for (;;) {
      const size_t size_end = rest.find("\r\n", at);
      if (size_end == std::string::npos) return reply;
      const size_t size = std::stoul(rest.substr(at, size_end - at), nullptr, 16);
      if (size == 0) {
        complete = true;
        return reply;
      }
      if (rest.size() < size_end + 2 + size + 2) return reply;
      reply.body += rest.substr(size_end + 2, size);
      at = size_end + 2 + size + 2;
    }
  }
  if (reply.headers.count("content-length")) {
    const size_t length = std::stoul(reply.headers["content-length"]);
    reply.body = rest.substr(0, length);
    complete = rest.size() >= length;
    return reply;
  }
  reply.body = rest;
  return reply;
}

}  // namespace

TcpConnection::TcpConnection(int port) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  if (fd_ < 0) throw std::runtime_error("socket failed");
  timeval timeout{60, 0};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0)
    throw std::runtime_error("cannot connect to port " + std::to_string(port));
}

TcpConnection::~TcpConnection() { close(fd_); }

void TcpConnection::send(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may hang up early (413): read what it said
    sent += static_cast<size_t>(n);
  }
}

bool TcpConnection::receive() {
  char chunk[16384];
  const ssize_t n = recv(fd_, chunk, sizeof chunk, 0);
  if (n <= 0) return false;
  buffer_.append(chunk, static_cast<size_t>(n));
  return true;
}

HttpReply TcpConnection::read_reply() {
  bool complete = false;
  HttpReply reply = parse(buffer_, complete);
  while (!complete && receive()) reply = parse(buffer_, complete);
  if (reply.status == 0) throw std::runtime_error("no HTTP response; received: " + buffer_.substr(0, 200));
  // Drop this response's bytes: its head, then its body as framed on the wire.
  const size_t head_end = buffer_.find("\r\n\r\n") + 4;
  size_t end = buffer_.size();
  if (complete && reply.headers.count("content-length")) {
    end = head_end + std::stoul(reply.headers["content-length"]);
  } else if (complete) {
    end = buffer_.find("\r\n0\r\n\r\n", head_end - 2) + 7;
  }
  buffer_.erase(0, std::min(end, buffer_.size()));
  return reply;
}

std::vector<std::string> TcpConnection::first_events(int events) {
  bool complete = false;
  while (receive()) {
    auto got = sse_events(parse(buffer_, complete).body);
    // An event counts once a later one began or the stream is over.
    if (static_cast<int>(got.size()) > events || complete) {
      got.resize(std::min<size_t>(got.size(), static_cast<size_t>(events)));
      return got;
    }
  }
  return sse_events(parse(buffer_, complete).body);
}

bool TcpConnection::closed_within(int milliseconds) {
  timeval timeout{milliseconds / 1000, (milliseconds % 1000) * 1000};
  setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  char byte;
  for (;;) {
    const ssize_t n = recv(fd_, &byte, 1, 0);
    if (n == 0) return true;
    if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK;
  }
}

HttpReply send_raw(int port, const std::string& raw) {
  TcpConnection connection(port);
  connection.send(raw);
  return connection.read_reply();
}

HttpReply http_call(int port, const std::string& method, const std::string& target, const std::string& body,
                    const std::vector<std::string>& headers) {
  std::string raw = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  for (const auto& h : headers) raw += h + "\r\n";
  if (!body.empty() || method == "POST")
    raw += "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n";
  return send_raw(port, raw + "\r\n" + body);
}

std::vector<std::string> sse_events(const std::string& body) {
  std::vector<std::string> events;
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const size_t end = body.find("\n\n", at);
    events.push_back(body.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6));
    if (end == std::string::npos) break;
    at = end + 2;
  }
  return events;
}

std::vector<std::string> read_then_hang_up(int port, const std::string& target, const std::string& body, int events) {
  TcpConnection connection(port);
  connection.send("POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: " +
                      std::to_string(body.size()) + "\r\n\r\n" + body);
  return connection.first_events(events);
}

}  // namespace snapstream::test
