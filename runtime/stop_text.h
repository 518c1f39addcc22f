// Stop strings over streamed text: text is released only once it can no longer be the start
// of a stop string, and the stop string itself is never released.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace snapstream::runtime {

class StopText {
 public:
  explicit StopText(std::vector<std::string> stops);

  // Adds generated text and returns what may be sent now. Once a stop string appears, returns
  // the text before it, and stopped() turns true; later calls return nothing.
  std::string push(std::string_view text);
  // The text still held back, when generation has ended without a stop string.
  std::string finish();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string held_;
  bool stopped_ = false;
};

}  // namespace snapstream::runtime
