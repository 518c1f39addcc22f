// Where tests find the real test models, the built binary and scratch space.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace snapstream::test {

// Reports a missing test input: a failure when CI=true, else a warning starting "SKIPPED: ",
// which CTest reads as a skip.
void skip_missing_input(const std::string& what);

// $SNAPSTREAM_MODELS, else ../shared/models beside the repository. When neither exists the
// calling test is skipped with a loud warning, or fails when CI=true.
std::optional<std::filesystem::path> models_dir_or_skip();

// The real tokenizers and their test cases: `vocab/` beside the models folder (../shared/vocab).
std::optional<std::filesystem::path> vocab_dir_or_skip();

// tests/e2e/node with its npm packages installed (scripts/setup-test-clients.sh); skipped
// loudly when missing, or a failure when CI=true.
std::optional<std::filesystem::path> node_clients_or_skip();

// True when `program` is on the PATH (installed by scripts/setup-test-clients.sh); else the
// calling test is skipped loudly, or fails when CI=true.
bool tool_or_skip(const std::string& program);

// The source tree's root.
std::filesystem::path source_dir();

// The source tree's configs/ folder.
std::filesystem::path configs_dir();

// The built `snapstream` binary.
std::filesystem::path snapstream_binary();

// A fresh empty directory under the system temp folder, removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

// `s` as one single-quoted shell word.
std::string shell_quote(const std::string& s);

// A whole file's bytes ("" when it cannot be read).
std::string read_text(const std::filesystem::path& path);

// Runs a shell command; returns its exit status and what it wrote to stdout and stderr.
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
CommandResult run_command(const std::string& command);

}  // namespace snapstream::test
