// A program the tests start and stop themselves (the server, Prometheus): fork/exec with its
// output in a log file, SIGTERM on stop, and the exit status kept.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace snapstream::test {

class ChildProcess {
 public:
  // argv[0] is the program's path; stdout and stderr go to `log_path`. The child has this
  // process's environment plus `environment` ("NAME=VALUE" entries, which win).
  ChildProcess(const std::vector<std::string>& argv, std::filesystem::path log_path, const std::vector<std::string>& environment = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // False once the process has exited (its status is then kept).
  bool running();
  pid_t pid() const { return pid_; }
  // Sends SIGTERM, waits up to 30 s (then SIGKILL); returns the exit code (-1 if killed by a signal).
  int stop();
  std::string log() const;

 private:
  std::filesystem::path log_path_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
};

// A TCP port on 127.0.0.1 that was free a moment ago, for programs that cannot report theirs.
int free_port();

}  // namespace snapstream::test
