// Test helpers for paths, scratch folders and running the real binary.
#include "tests/support/test_paths.h"

#include <unistd.h>
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

namespace snapstream::test {

void skip_missing_input(const std::string& what) {
  const char* ci = std::getenv("CI");
  if (ci != nullptr && std::string(ci) == "true") FAIL(what << " (required when CI=true)");
  WARN("SKIPPED: " << what);
}

std::optional<std::filesystem::path> models_dir_or_skip() {
  std::filesystem::path dir;
  if (const char* env = std::getenv("SNAPSTREAM_MODELS"); env != nullptr && *env != '\0')
    dir = env;
  else
    dir = std::filesystem::path(SNAPSTREAM_SOURCE_DIR) / ".." / "shared" / "models";
  if (std::filesystem::exists(dir / "stories260K.golden.json")) return dir;
  skip_missing_input("test models not found in " + dir.string() + "; set SNAPSTREAM_MODELS to run this test");
  return std::nullopt;
}

std::optional<std::filesystem::path> vocab_dir_or_skip() {
  const auto models = models_dir_or_skip();
  if (!models) return std::nullopt;
  const auto dir = *models / ".." / "vocab";
  if (std::filesystem::exists(dir / "README.md")) return dir;
  skip_missing_input("tokenizer test vocabularies not found in " + dir.string());
  return std::nullopt;
}

std::optional<std::filesystem::path> node_clients_or_skip() {
  const auto dir = std::filesystem::path(SNAPSTREAM_SOURCE_DIR) / "tests" / "e2e" / "node";
  if (std::filesystem::exists(dir / "node_modules") && std::system("command -v node >/dev/null 2>&1") == 0) return dir;
  skip_missing_input("node test clients are not installed in " + dir.string() + "; run scripts/setup-test-clients.sh");
  return std::nullopt;
}

bool tool_or_skip(const std::string& program) {
  if (std::system(("command -v " + program + " >/dev/null 2>&1").c_str()) == 0) return true;
  skip_missing_input(program + " is not installed; run scripts/setup-test-clients.sh");
  return false;
}

std::filesystem::path source_dir() { return SNAPSTREAM_SOURCE_DIR; }

std::filesystem::path configs_dir() { return std::filesystem::path(SNAPSTREAM_SOURCE_DIR) / "configs"; }

std::filesystem::path snapstream_binary() { return SNAPSTREAM_BINARY; }

TempDir::TempDir() {
  std::random_device seed;
  path_ = std::filesystem::temp_directory_path() /
          ("snapstream-test-" + std::to_string(::getpid()) + "-" + std::to_string(seed()));
  std::filesystem::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

CommandResult run_command(const std::string& command) {
  TempDir scratch;
  const auto out_path = scratch / "stdout";
  const auto err_path = scratch / "stderr";
  const std::string full = command + " >" + out_path.string() + " 2>" + err_path.string();
  const int status = std::system(full.c_str());
  CommandResult result;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = read_text(out_path);
  result.err = read_text(err_path);
  return result;
}

}  // namespace snapstream::test
