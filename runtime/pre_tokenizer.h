// The pre-tokenizers of byte-level BPE vocabularies: text is cut into words by a sequence of
// regular expressions (each one splitting every piece the previous ones left, keeping both
// matches and the text between them), and BPE never merges across a cut. The expressions are
// the published ones of each tokenizer, run by ICU, whose Unicode tables give \p{L}, \p{N},
// \p{P} and \s their meaning.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace snapstream::runtime {

class PreTokenizer {
 public:
  // The pre-tokenizer named by a GGUF file's tokenizer.ggml.pre; an unknown name gets GPT-2's
  // rules and `known` false.
  static PreTokenizer for_name(std::string_view pre, bool& known);
  // Whether `pre` has rules of their own; their names, for messages.
  static bool is_known(std::string_view pre);
  static std::string known_names();

  explicit PreTokenizer(const std::vector<std::string>& patterns);
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;
  ~PreTokenizer();

  // The words of `text` (valid UTF-8) in order; their concatenation is `text`.
  std::vector<std::string> split(std::string_view text) const;

 private:
  struct Patterns;
  std::unique_ptr<Patterns> patterns_;
};

}  // namespace snapstream::runtime
