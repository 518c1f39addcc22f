// The docker/ deployment, checked without a Docker engine: the Dockerfile and compose lint (and
// that it catches a broken copy), promtool on the Prometheus config, and that the runtime image
// installs the Debian package of every shared library the binary links.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "tests/support/http_client.h"
#include "tests/support/server_process.h"
#include "tests/support/test_paths.h"

using namespace snapstream;

namespace {

using test::read_text;
using test::shell_quote;

void write_text(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

// `text` with `from` replaced; fails the test when `from` is missing, so a mutation never
// silently becomes a no-op.
std::string replaced(const std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.substr(0, at) + to + text.substr(at + from.size());
}

// A copy of the deployment files (docker/ and configs/) to break on purpose.
void copy_deployment(const std::filesystem::path& to) {
  const auto options = std::filesystem::copy_options::recursive;
  std::filesystem::copy(test::source_dir() / "docker", to / "docker", options);
  std::filesystem::copy(test::configs_dir(), to / "configs", options);
}

// The packages named by the runtime stage's `apt-get install` (flags left out).
std::set<std::string> runtime_stage_packages(const std::string& dockerfile) {
  const std::string runtime = dockerfile.substr(dockerfile.rfind("\nFROM "));
  std::set<std::string> packages;
  std::istringstream lines(std::regex_replace(runtime, std::regex("\\\\\n"), " "));
  std::string line;
  while (std::getline(lines, line)) {
    const size_t install = line.find("apt-get install");
    if (install == std::string::npos) continue;
    std::istringstream words(line.substr(install + 15));
    std::string word;
    while (words >> word && word != "&&")
      if (word[0] != '-') packages.insert(word);
  }
  return packages;
}

}  // namespace

TEST_CASE("the Dockerfile and the compose file pass the deployment lint and a broken copy fails it", "[e2e][deploy]") {
  const auto clients = test::node_clients_or_skip();
  if (!clients) return;
  const std::string lint = "node " + shell_quote((*clients / "lint_deploy.mjs").string()) + " ";
  const auto result = test::run_command(lint + shell_quote(test::source_dir().string()));
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  CHECK(result.out.find(" checks, 0 problems") != std::string::npos);

  test::TempDir copy;
  copy_deployment(copy.path());
  const auto dockerfile = copy / "docker" / "Dockerfile";
  write_text(dockerfile, std::regex_replace(read_text(dockerfile), std::regex("HEALTHCHECK [^\\n]*\\\\\\n[^\\n]*\\n"), ""));
  write_text(dockerfile, replaced(read_text(dockerfile), "USER snapstream", "USER root"));
  write_text(dockerfile, replaced(read_text(dockerfile), "ARG SNAPSTREAM_MARCH=x86-64-v3", "ARG SNAPSTREAM_MARCH=native"));
  const auto compose = copy / "docker" / "docker-compose.yml";
  write_text(compose, replaced(read_text(compose), "\n  grafana:\n", "\n  dashboards:\n"));
  write_text(compose, replaced(read_text(compose), "- \"${SNAPSTREAM_PORT:-8000}:8000\"", "- \"8000:80\""));
  const auto broken = test::run_command(lint + shell_quote(copy.path().string()));
  INFO(broken.out << broken.err);
  CHECK(broken.exit_code == 1);
  CHECK(broken.out.find("the runtime stage needs a HEALTHCHECK on /health") != std::string::npos);
  CHECK(broken.out.find("must run as a non-root USER") != std::string::npos);
  CHECK(broken.out.find("must target x86-64-v3 by default") != std::string::npos);
  CHECK(broken.out.find("no 'grafana' service") != std::string::npos);
  CHECK(broken.out.find("the server must publish port 8000") != std::string::npos);
}

TEST_CASE("promtool accepts the shipped Prometheus config and refuses a broken copy", "[e2e][deploy]") {
  if (!test::tool_or_skip("promtool")) return;
  const auto config = test::source_dir() / "docker" / "prometheus.yml";
  const auto result = test::run_command("promtool check config " + shell_quote(config.string()));
  INFO(result.out << result.err);
  CHECK(result.exit_code == 0);
  CHECK(result.out.find("SUCCESS") != std::string::npos);

  test::TempDir dir;
  write_text(dir / "prometheus.yml", replaced(read_text(config), "scrape_interval: 5s", "scrape_interval: five"));
  const auto broken = test::run_command("promtool check config " + shell_quote((dir / "prometheus.yml").string()));
  CHECK(broken.exit_code != 0);
}

TEST_CASE("the runtime image installs the Debian package of every shared library the binary links", "[e2e][deploy]") {
  if (!test::tool_or_skip("dpkg-query")) return;
  const auto ldd = test::run_command("ldd " + shell_quote(test::snapstream_binary().string()));
  REQUIRE(ldd.exit_code == 0);
  const std::set<std::string> installed = runtime_stage_packages(read_text(test::source_dir() / "docker" / "Dockerfile"));
  REQUIRE(installed.count("curl") == 1);  // the health check's client
  // In every Debian 12 image, debian:12-slim included: apt itself needs them.
  const std::set<std::string> in_base_image = {"libc6", "libgcc-s1", "libstdc++6"};
  const std::regex library(R"(=>\s+(/\S+))");
  int libraries = 0;
  std::istringstream lines(ldd.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (!std::regex_search(line, match, library)) continue;
    const std::filesystem::path path = match[1].str();
    std::string owner;
    for (const auto& candidate : {path, std::filesystem::canonical(path)}) {
      const auto found = test::run_command("dpkg -S " + shell_quote(candidate.string()));
      if (found.exit_code == 0) {
        owner = found.out.substr(0, found.out.find_first_of(":,"));
        break;
      }
    }
    INFO(line);
    REQUIRE_FALSE(owner.empty());
    ++libraries;
    // Sanitizer builds link their runtimes; the image is built without a sanitizer.
    if (std::regex_search(owner, std::regex("^lib(a|ub|t)san[0-9]"))) continue;
    INFO("package " << owner << " is missing from the runtime stage's apt-get install");
    CHECK((installed.count(owner) == 1 || in_base_image.count(owner) == 1));
  }
  CHECK(libraries >= 4);
}

TEST_CASE("serve runs from the shipped settings file with the environment and the command line on top", "[e2e][deploy]") {
  const auto models = test::models_dir_or_skip();
  if (!models) return;
  // The file names the container's paths; a user outside it overrides them as here.
  setenv("SNAPSTREAM_SERVE_SERVED_MODEL_NAME", "from-environment", 1);
  setenv("SNAPSTREAM_SERVE_SLOTS", "3", 1);
  setenv("SNAPSTREAM_SERVE_HOST", "0.0.0.0", 1);  // the command line's --host wins
  test::ServerProcess server({"--config", (test::configs_dir() / "serve.toml").string(), "--model",
                              (*models / "stories260K.gguf").string(), "--host", "127.0.0.1"});
  unsetenv("SNAPSTREAM_SERVE_SERVED_MODEL_NAME");
  unsetenv("SNAPSTREAM_SERVE_SLOTS");
  unsetenv("SNAPSTREAM_SERVE_HOST");
  const std::string log = server.log();
  INFO(log);
  CHECK(log.find("settings from the environment: SNAPSTREAM_SERVE_SLOTS, SNAPSTREAM_SERVE_SERVED_MODEL_NAME") != std::string::npos);
  CHECK(log.find("serving 'from-environment' on http://127.0.0.1:") != std::string::npos);
  CHECK(log.find("with 3 slots") != std::string::npos);
  CHECK(log.find("SnapStream C=128 (sink 4, compressed 60, ring 64), window 32, max-pool 7") != std::string::npos);
  const auto reply = test::http_call(server.port(), "POST", "/v1/completions",
                                     R"({"model": "from-environment", "prompt": "Once upon a time", "max_tokens": 4})");
  CHECK(reply.status == 200);
  CHECK(server.stop() == 0);
}
