// Retrieval tasks in the manner of RULER: facts planted at random depths in ordinary text (the
// haystack) and a question at the end, built as token ids from a seed, with exact-match scoring.
// They ask whether a compressed cache still holds the one fact the answer needs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "eval/token_span.h"
#include "runtime/tokenizer.h"

namespace snapstream::eval {

enum class RetrievalTask {
  SingleNeedle,     // niah: one fact, asked for
  MultiKey,         // multikey: the fact among others of the same form about other names
  MultiValue,       // multivalue: a name's first to fourth numbers, all asked for
  MultiQuery,       // multiquery: several facts, two of them asked for
  VariableTracking  // vt: a number passed along a chain of names, beside a second chain
};

// niah, multikey, multivalue, multiquery or vt; throws ConfigError for another name.
RetrievalTask parse_retrieval_task(std::string_view name);
std::string_view retrieval_task_name(RetrievalTask task);

// Sentences of ordinary text, each tokenized as it follows earlier text (no BOS), from which
// haystacks are cut in order from a random first sentence.
class Haystack {
 public:
  // Splits each text into sentences after '.', '!' or '?'. Throws InvalidRequestError when no
  // text holds a sentence.
  Haystack(const std::vector<std::string>& texts, const runtime::Tokenizer& tokenizer);
  const std::vector<std::vector<int32_t>>& sentences() const { return sentences_; }

 private:
  std::vector<std::vector<int32_t>> sentences_;
};

// How many units a task plants and which are asked about. A unit is what one question is about:
// a name's number (niah, multikey), a name's numbers (multivalue), two names' numbers
// (multiquery), a chain of names (vt). Evaluation asks about the first unit of each task's own
// count; training data asks about every unit, each question followed by its answer, so one
// sequence carries many answers to learn from.
struct TaskShape {
  int64_t units = 0;            // 0: the task's own (niah 1, multikey 4, multivalue 1, multiquery 2, vt 2)
  bool ask_every_unit = false;  // false: one question, about the first unit
};

struct TaskInstance {
  RetrievalTask task = RetrievalTask::SingleNeedle;
  std::vector<int32_t> prompt;          // BOS, the haystack with the facts, the question
  std::string answer;                   // the completion that scores, e.g. " 4821."
  std::vector<int32_t> answer_ids;      // the answer tokenized as it follows the prompt
  std::vector<int64_t> fact_positions;  // where each planted fact starts in the prompt
  // In each fact the last question needs (its unit's), the tokens of the value its answer copies
  // (the number or name before the full stop, with that stop): what a cache must keep.
  std::vector<TokenSpan> needed_values;
  // Every answer's tokens; with one question, just answer_ids'. With every unit asked, the
  // prompt holds the earlier questions each followed by its answer, and ends in the last question.
  std::vector<TokenSpan> answer_spans;
};

// Instance `index` of `task` whose prompt and answer together are exactly `length` tokens, so
// it fits a model with that context. The same task, length, haystack, seed and index give the
// same instance. Throws InvalidRequestError when `length` cannot hold the facts and questions,
// ConfigError when the shape asks for more units than the task has names for.
TaskInstance make_task_instance(RetrievalTask task, int64_t length, const Haystack& haystack,
                                const runtime::Tokenizer& tokenizer, uint64_t seed, int64_t index,
                                const TaskShape& shape = {});

// Whether `completion` (the text generated after the prompt) answers the instance: its text up
// to the first '.' equals the answer's, spaces at either end aside.
bool answers(const TaskInstance& instance, std::string_view completion);

}  // namespace snapstream::eval
