// Token ids in, text out: the one incremental detokenizer, as vLLM keeps one in its front end.
// Each token becomes its bytes (byte tokens as their byte, no leading space after BOS), bytes
// are assembled into whole UTF-8 characters, and stop strings are held back until they can no
// longer match, then never released.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/stop_text.h"
#include "runtime/tokenizer.h"
#include "runtime/utf8_stream.h"

namespace snapstream::runtime {

class TextStream {
 public:
  // `previous`: the token before the first one pushed (a prompt's last), -1 for none.
  // `stops`: stop strings; generation ends at the first one, which is not part of the text.
  explicit TextStream(const Tokenizer& tokenizer, int32_t previous = -1, std::vector<std::string> stops = {});

  // Adds a token; returns the text that is complete and can no longer begin a stop string.
  std::string push(int32_t id);
  // Generation has ended: whatever is still held, an unfinished character as U+FFFD.
  std::string finish();
  // A stop string appeared: push() and finish() return nothing more.
  bool stopped() const { return stop_.stopped(); }

 private:
  const Tokenizer* tokenizer_;
  int32_t previous_;
  Utf8Stream utf8_;
  StopText stop_;
};

// The whole text of `ids`, which follow `previous` (-1 for none), as a TextStream gives it.
std::string detokenize(const Tokenizer& tokenizer, std::span<const int32_t> ids, int32_t previous = -1);

}  // namespace snapstream::runtime
