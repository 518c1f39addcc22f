// Turns a stream of token bytes into valid UTF-8 text, holding back a character that is
// split across tokens until its last byte arrives.
#pragma once

#include <string>
#include <string_view>

namespace snapstream::runtime {

class Utf8Stream {
 public:
  // Returns the text that is complete so far; invalid bytes become U+FFFD.
  std::string push(std::string_view bytes);
  // Returns whatever is still held, with an unfinished character as U+FFFD.
  std::string finish();

 private:
  std::string pending_;
};

}  // namespace snapstream::runtime
