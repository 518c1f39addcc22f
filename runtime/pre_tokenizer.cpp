// Pre-tokenizer rules by name and their application with ICU regular expressions.
#include "runtime/pre_tokenizer.h"

#include <unicode/regex.h>
#include <unicode/unistr.h>

#include <utility>

#include "runtime/errors.h"

namespace snapstream::runtime {
namespace {

// GPT-2's word rule: contractions, letters, digits and other symbols each with an optional
// leading space, then runs of whitespace (keeping the last space for the next word).
const char* const kGpt2 = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
// Llama 3's: case-insensitive contractions, digits in groups of up to three, newlines apart.
const char* const kLlama3 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// Qwen2's: Llama 3's with single digits.
const char* const kQwen2 =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
// The CJK ideograph and Hangul blocks DeepSeek's tokenizers keep together.
const char* const kDeepSeekCjk = R"([\x{4E00}-\x{9FA5}\x{0800}-\x{4E00}\x{AC00}-\x{D7FF}]+)";

struct Rule {
  std::vector<std::string_view> names;
  std::vector<std::string> patterns;
};

const std::vector<Rule>& rules() {
  static const std::vector<Rule> table = {
      {{"gpt-2", "mpt", "default"}, {kGpt2}},
      {{"llama-bpe", "llama3", "smaug-bpe"}, {kLlama3}},
      {{"qwen2"}, {kQwen2}},
      // Digits one by one, then GPT-2's rule (StarCoder, Refact, SmolLM).
      {{"starcoder", "refact", "smollm"}, {R"(\p{N})", kGpt2}},
      {{"falcon"}, {R"([\p{P}\$\+<=>\^~\|`]+)", kGpt2, R"([0-9][0-9][0-9])"}},
      // DeepSeek LLM: newlines alone, cased letters, ASCII and full-width punctuation, trailing
      // whitespace, CJK, digit runs.
      {{"deepseek-llm"},
       {R"([\r\n])", R"(\s?[\p{Lu}\p{Ll}\p{Lt}]+)",
        R"(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)", R"(\s+$)", kDeepSeekCjk,
        R"(\p{N}+)"}},
      {{"deepseek-coder"}, {R"([\r\n])", R"(\s?\p{L}+)", R"(\s?\p{P}+)", kDeepSeekCjk, R"(\p{N})"}},
  };
  return table;
}

}  // namespace

struct PreTokenizer::Patterns {
  std::vector<std::unique_ptr<icu::RegexPattern>> compiled;
};

PreTokenizer PreTokenizer::for_name(std::string_view pre, bool& known) {
  for (const Rule& rule : rules())
    for (const std::string_view name : rule.names)
      if (name == pre) {
        known = true;
        return PreTokenizer(rule.patterns);
      }
  known = false;
  return PreTokenizer(rules().front().patterns);
}

bool PreTokenizer::is_known(std::string_view pre) {
  for (const Rule& rule : rules())
    for (const std::string_view name : rule.names)
      if (name == pre) return true;
  return false;
}

std::string PreTokenizer::known_names() {
  std::string names;
  for (const Rule& rule : rules())
    for (const std::string_view name : rule.names) names += (names.empty() ? "" : ", ") + std::string(name);
  return names;
}

PreTokenizer::PreTokenizer(const std::vector<std::string>& patterns) : patterns_(std::make_unique<Patterns>()) {
  for (const std::string& pattern : patterns) {
    UErrorCode status = U_ZERO_ERROR;
    UParseError where;
    std::unique_ptr<icu::RegexPattern> compiled(
        icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(pattern), 0, where, status));
    if (U_FAILURE(status)) throw Error("pre-tokenizer pattern " + pattern + " does not compile: " + u_errorName(status));
    patterns_->compiled.push_back(std::move(compiled));
  }
}

PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;
PreTokenizer::~PreTokenizer() = default;

std::vector<std::string> PreTokenizer::split(std::string_view text) const {
  const icu::UnicodeString unicode = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  // Pieces as [begin, end) in UTF-16 units; each pattern refines the previous pieces.
  std::vector<std::pair<int32_t, int32_t>> pieces = {{0, unicode.length()}};
  for (const auto& pattern : patterns_->compiled) {
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::RegexMatcher> matcher(pattern->matcher(unicode, status));
    if (U_FAILURE(status)) throw Error(std::string("pre-tokenizer matcher: ") + u_errorName(status));
    std::vector<std::pair<int32_t, int32_t>> refined;
    for (const auto& [begin, end] : pieces) {
      if (begin == end) continue;
      // Each piece is matched on its own: lookaheads and $ end where the piece ends.
      matcher->region(begin, end, status);
      int32_t cursor = begin;
      while (matcher->find(status) && U_SUCCESS(status)) {
        const int32_t match_begin = matcher->start(status), match_end = matcher->end(status);
        if (match_end == match_begin) continue;  // an empty match cuts nothing
        if (match_begin > cursor) refined.emplace_back(cursor, match_begin);
        refined.emplace_back(match_begin, match_end);
        cursor = match_end;
      }
      if (cursor < end) refined.emplace_back(cursor, end);
    }
    pieces = std::move(refined);
  }
  std::vector<std::string> words;
  words.reserve(pieces.size());
  for (const auto& [begin, end] : pieces) {
    std::string word;
    unicode.tempSubStringBetween(begin, end).toUTF8String(word);
    words.push_back(std::move(word));
  }
  return words;
}

}  // namespace snapstream::runtime
