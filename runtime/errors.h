// Typed errors of the runtime, each carrying a message a user can act on.
#pragma once

#include <stdexcept>
#include <string>

namespace snapstream {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A model or tokenizer file that cannot be used: truncated, corrupt or unsupported.
class ModelFileError : public Error {
 public:
  ModelFileError(const std::string& path, const std::string& problem) : Error(path + ": " + problem) {}
};

// A configuration file or value that is missing or invalid.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// A request argument (prompt, sampling option, length) that cannot be honoured.
class InvalidRequestError : public Error {
 public:
  using Error::Error;
};

}  // namespace snapstream
