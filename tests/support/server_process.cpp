// Starting the server binary and waiting until its log says it serves.
#include "tests/support/server_process.h"

#include <chrono>
#include <regex>
#include <stdexcept>
#include <thread>

namespace snapstream::test {

ServerProcess::ServerProcess(const std::vector<std::string>& args, const std::vector<std::string>& environment,
                             const std::vector<std::string>& launcher) {
  std::vector<std::string> argv = launcher;
  argv.insert(argv.end(), {snapstream_binary().string(), "serve", "--port", "0"});
  argv.insert(argv.end(), args.begin(), args.end());
  process_ = std::make_unique<ChildProcess>(argv, dir_ / "server.log", environment);
  const std::regex listening(R"(listening on http://[^:]+:(\d+))");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (std::chrono::steady_clock::now() < deadline) {
    const std::string text = log();
    std::smatch match;
    if (port_ == 0 && std::regex_search(text, match, listening)) port_ = std::stoi(match[1]);
    if (port_ != 0 && text.find("serving '") != std::string::npos) return;
    if (!process_->running()) throw std::runtime_error("the server exited during start-up:\n" + log());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::string text = log();
  stop();
  throw std::runtime_error("the server did not get ready within 60 s:\n" + text);
}

ServerProcess::~ServerProcess() { stop(); }

int ServerProcess::stop() { return process_->stop(); }

std::string ServerProcess::log() const { return process_->log(); }

}  // namespace snapstream::test
