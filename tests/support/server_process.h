// A real `snapstream serve` process for end-to-end tests: started on a free port, ready once it
// logs that it serves, stopped with SIGTERM (its exit status is kept).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "tests/support/child_process.h"
#include "tests/support/test_paths.h"

namespace snapstream::test {

class ServerProcess {
 public:
  // `args` follow "serve" (the model and options); --port 0 is added. Throws std::runtime_error,
  // with the server's log, when it does not get ready within 60 s.
  // `environment` entries ("NAME=VALUE") are added to the server's environment. `launcher`, when
  // given, starts the binary (mpirun and its arguments, say).
  explicit ServerProcess(const std::vector<std::string>& args, const std::vector<std::string>& environment = {},
                         const std::vector<std::string>& launcher = {});
  ~ServerProcess();
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The process started: the server, or its launcher.
  pid_t pid() const { return process_->pid(); }
  bool running() { return process_->running(); }
  // Sends SIGTERM and waits; returns the exit code (-1 if killed by a signal).
  int stop();
  std::string log() const;

 private:
  TempDir dir_;
  std::unique_ptr<ChildProcess> process_;
  int port_ = 0;
};

}  // namespace snapstream::test
