// Reading JSONL input files: one JSON object per line, blank lines skipped, and every error
// reported as "FILE:LINE: problem".
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>

namespace snapstream::eval {

// Calls `line` with each object in order. Throws InvalidRequestError "FILE:LINE: ..." when a
// line is not JSON, not an object, or when `line` throws InvalidRequestError for it.
void read_jsonl(const std::string& path, const std::string& what, const std::function<void(const nlohmann::json&)>& line);

}  // namespace snapstream::eval
