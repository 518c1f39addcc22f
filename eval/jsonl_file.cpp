// JSONL parsing with a line number on every error.
#include "eval/jsonl_file.h"

#include <fstream>

#include "runtime/errors.h"

namespace snapstream::eval {

void read_jsonl(const std::string& path, const std::string& what, const std::function<void(const nlohmann::json&)>& line) {
  std::ifstream in(path);
  if (!in) throw runtime::InvalidRequestError(path + ": cannot open the " + what + " file");
  std::string text;
  for (int64_t number = 1; std::getline(in, text); ++number) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      const auto parsed = nlohmann::json::parse(text);
      if (!parsed.is_object()) throw runtime::InvalidRequestError("each line must be a JSON object");
      line(parsed);
    } catch (const nlohmann::json::exception& e) {
      throw runtime::InvalidRequestError(path + ":" + std::to_string(number) + ": not valid JSON (" + e.what() + ")");
    } catch (const runtime::InvalidRequestError& e) {
      throw runtime::InvalidRequestError(path + ":" + std::to_string(number) + ": " + e.what());
    }
  }
}

}  // namespace snapstream::eval
