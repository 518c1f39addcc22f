// An error the API reports to the client: HTTP status, message and the offending parameter.
#pragma once

#include <stdexcept>
#include <string>

namespace snapstream::server::api {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, const std::string& message, std::string param = {}, std::string code = {})
      : std::runtime_error(message), status_(status), param_(std::move(param)), code_(std::move(code)) {}
  int status() const { return status_; }
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }

 private:
  int status_;
  std::string param_;
  std::string code_;
};

}  // namespace snapstream::server::api
