// Typed errors of the runtime, each carrying a message a user can act on.
#pragma once

#include <stdexcept>
#include <string>

namespace snapstream::runtime {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Input the user can fix (a file, a config, a request), as opposed to a fault of the program.
class InputError : public Error {
 public:
  using Error::Error;
};

// A model or tokenizer file that cannot be used: truncated, corrupt or unsupported.
class ModelFileError : public InputError {
 public:
  ModelFileError(const std::string& path, const std::string& problem) : InputError(path + ": " + problem) {}
};

// A configuration file or value that is missing or invalid.
class ConfigError : public InputError {
 public:
  using InputError::InputError;
};

// A request argument (prompt, sampling option, length) that cannot be honoured.
class InvalidRequestError : public InputError {
 public:
  using InputError::InputError;
};

// A prompt that leaves no room to generate within the model's context.
class ContextLengthError : public InvalidRequestError {
 public:
  using InvalidRequestError::InvalidRequestError;
};

// A caller broke a contract of the runtime's own interfaces (a slot out of range, prefill
// chunks out of order): a fault of the program, never of the user's input.
class ContractError : public Error {
 public:
  using Error::Error;
};

}  // namespace snapstream::runtime
