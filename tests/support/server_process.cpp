// Starting and stopping the server binary with fork/exec, its log in a temporary file.
#include "tests/support/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace snapstream::test {

ServerProcess::ServerProcess(const std::vector<std::string>& args) {
  const std::string log_path = (dir_ / "server.log").string();
  std::vector<std::string> argv = {snapstream_binary().string(), "serve", "--port", "0"};
  argv.insert(argv.end(), args.begin(), args.end());
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    const int fd = open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    std::vector<char*> raw;
    for (auto& a : argv) raw.push_back(a.data());
    raw.push_back(nullptr);
    execv(raw[0], raw.data());
    _exit(127);
  }
  const std::regex listening(R"(listening on http://[^:]+:(\d+))");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = log();
    std::smatch match;
    if (port_ == 0 && std::regex_search(text, match, listening)) port_ = std::stoi(match[1]);
    if (port_ != 0 && text.find("serving '") != std::string::npos) return;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      throw std::runtime_error("the server exited during start-up:\n" + text);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string text = log();
  stop();
  throw std::runtime_error("the server did not get ready within 60 s:\n" + text);
}

ServerProcess::~ServerProcess() { stop(); }

int ServerProcess::stop() {
  if (pid_ < 0) return exit_code_;
  kill(pid_, SIGTERM);
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return exit_code_;
}

std::string ServerProcess::log() const {
  std::ifstream in(dir_ / "server.log");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace snapstream::test
