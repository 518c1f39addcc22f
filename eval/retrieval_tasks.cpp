// Builds retrieval task instances: each task's facts, question and answer from its templates,
// a haystack cut to the length left over, and the facts placed at sentence boundaries drawn
// from the seed (facts whose order carries meaning, a chain's or a list's, keep it).
#include "eval/retrieval_tasks.h"

#include <algorithm>
#include <array>

#include "runtime/errors.h"

namespace snapstream::eval {
namespace {

// Names of the kind the stories260K vocabulary was trained on, so the facts read as its text.
constexpr std::array<std::string_view, 24> kNames = {"Lily", "Tom",  "Ben", "Sue",  "Max",  "Mia",  "Sam",  "Anna",
                                                     "Tim",  "Jack", "Lucy", "Bob", "Amy",  "Zoe",  "Leo",  "Kate",
                                                     "Jill", "Dan",  "Emma", "Fred", "Rose", "Jake", "Molly", "Sara"};
constexpr int64_t kLowestValue = 1000;  // four-digit numbers
constexpr int64_t kValueCount = 9000;
constexpr int64_t kMultiKeyFacts = 4;     // the asked one among three others
constexpr int64_t kMultiValueFacts = 4;   // numbers of the one name
// Multi-value facts say which of the name's numbers each is, and the answer names them the same
// way: listed bare, in the order the facts appear, the retrieval model found the numbers but not
// their order (right numbers out of order, or one written twice, in all 41 of its misses), and the
// order of facts in a text is not what a KV cache is judged on. Asking by ordinal keeps all four
// facts needed.
constexpr std::array<std::string_view, kMultiValueFacts> kOrdinals = {"first", "second", "third", "fourth"};
constexpr int64_t kMultiQueryFacts = 4;   // facts, of which kMultiQueryAsked are asked for
constexpr int64_t kMultiQueryAsked = 2;
constexpr int64_t kChainLength = 4;       // names along each variable-tracking chain

struct TaskName {
  const char* name;
  RetrievalTask task;
};
constexpr std::array<TaskName, 5> kTasks = {{{"niah", RetrievalTask::SingleNeedle},
                                             {"multikey", RetrievalTask::MultiKey},
                                             {"multivalue", RetrievalTask::MultiValue},
                                             {"multiquery", RetrievalTask::MultiQuery},
                                             {"vt", RetrievalTask::VariableTracking}}};

// SplitMix64: the same draws from the same seed on every platform (the standard library's
// distributions are not specified bit for bit).
class Draws {
 public:
  explicit Draws(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

 private:
  uint64_t state_;
};

// A question and the completion that answers it, e.g. " 4821.".
struct Question {
  std::string text;
  std::string answer;
};

// A task's text before placement: facts in groups whose inner order the text keeps, and one
// question per unit, the first unit's first.
struct TaskText {
  std::vector<std::vector<std::string>> groups;
  std::vector<Question> questions;
};

int64_t own_units(RetrievalTask task) {
  switch (task) {
    case RetrievalTask::SingleNeedle: return 1;
    case RetrievalTask::MultiKey: return kMultiKeyFacts;
    case RetrievalTask::MultiValue: return 1;
    case RetrievalTask::MultiQuery: return kMultiQueryFacts / kMultiQueryAsked;
    case RetrievalTask::VariableTracking: return 2;
  }
  return 1;
}

// Which unit a fact group belongs to: multiquery's groups are single facts, kMultiQueryAsked to a
// unit; every other task's group is its unit's facts.
int64_t unit_of_group(RetrievalTask task, int64_t group) {
  return task == RetrievalTask::MultiQuery ? group / kMultiQueryAsked : group;
}

int64_t names_per_unit(RetrievalTask task) {
  if (task == RetrievalTask::MultiQuery) return kMultiQueryAsked;
  if (task == RetrievalTask::VariableTracking) return kChainLength;
  return 1;
}

std::vector<std::string_view> draw_names(Draws& draws, int64_t count) {
  std::vector<std::string_view> names(kNames.begin(), kNames.end());
  const auto size = static_cast<int64_t>(names.size());
  for (int64_t i = 0; i < count; ++i) std::swap(names[static_cast<size_t>(i)], names[static_cast<size_t>(i + draws.below(size - i))]);
  names.resize(static_cast<size_t>(count));
  return names;
}

std::vector<std::string> draw_values(Draws& draws, int64_t count) {
  std::vector<int64_t> values;
  while (static_cast<int64_t>(values.size()) < count) {
    const int64_t value = kLowestValue + draws.below(kValueCount);
    if (std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  }
  std::vector<std::string> text;
  for (const int64_t value : values) text.push_back(std::to_string(value));
  return text;
}

std::string number_fact(std::string_view name, const std::string& value) {
  return "The secret number of " + std::string(name) + " is " + value + ".";
}

// "a, b, c, d" or "a and b".
std::string listed(const std::vector<std::string>& items, const char* last_separator) {
  std::string text;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) text += i + 1 == items.size() ? last_separator : ", ";
    text += items[i];
  }
  return text;
}

// Items [first, first + count) of `items` as strings.
template <typename Item>
std::vector<std::string> slice(const std::vector<Item>& items, int64_t first, int64_t count) {
  return std::vector<std::string>(items.begin() + first, items.begin() + first + count);
}

// An answer as it follows its question: a space, the text, a full stop. Appended rather than
// " " + text + ".": GCC 12 warns falsely (-Wrestrict) on that operator+ chain.
std::string answer_text(const std::string& body) {
  std::string answer = " ";
  answer += body;
  answer += ".";
  return answer;
}

TaskText task_text(RetrievalTask task, int64_t units, Draws& draws) {
  TaskText text;
  switch (task) {
    case RetrievalTask::SingleNeedle:
    case RetrievalTask::MultiKey: {
      const auto names = draw_names(draws, units);
      const auto values = draw_values(draws, units);
      for (int64_t i = 0; i < units; ++i) {
        const std::string name(names[static_cast<size_t>(i)]);
        const auto& value = values[static_cast<size_t>(i)];
        text.groups.push_back({number_fact(name, value)});
        text.questions.push_back({"What is the secret number of " + name + "? The secret number of " + name + " is", answer_text(value)});
      }
      break;
    }
    case RetrievalTask::MultiValue: {
      const auto names = draw_names(draws, units);
      const auto values = draw_values(draws, kMultiValueFacts * units);
      for (int64_t i = 0; i < units; ++i) {
        const std::string name(names[static_cast<size_t>(i)]);
        const auto own = slice(values, i * kMultiValueFacts, kMultiValueFacts);
        auto& group = text.groups.emplace_back();
        std::vector<std::string> answered;
        for (size_t k = 0; k < own.size(); ++k) {
          const std::string ordinal(kOrdinals[k]);
          group.push_back("The " + ordinal + " secret number of " + name + " is " + own[k] + ".");
          answered.push_back(ordinal + " " + own[k]);
        }
        text.questions.push_back({"What are all the secret numbers of " + name + "? The secret numbers of " + name + " are", answer_text(listed(answered, ", "))});
      }
      break;
    }
    case RetrievalTask::MultiQuery: {
      const auto names = draw_names(draws, kMultiQueryAsked * units);
      const auto values = draw_values(draws, kMultiQueryAsked * units);
      for (size_t i = 0; i < names.size(); ++i) text.groups.push_back({number_fact(names[i], values[i])});
      for (int64_t i = 0; i < units; ++i) {
        const auto asked_names = slice(names, i * kMultiQueryAsked, kMultiQueryAsked);
        const auto asked_values = slice(values, i * kMultiQueryAsked, kMultiQueryAsked);
        text.questions.push_back({"What are the secret numbers of " + listed(asked_names, " and ") + "? They are", answer_text(listed(asked_values, " and "))});
      }
      break;
    }
    case RetrievalTask::VariableTracking: {
      // Chains each passing its own number along kChainLength names; all but the asked one are
      // distractors. Each fact names the giver before the taker, the order the answer lists them
      // in: a causal model finds what follows a name it has just written, and phrased the other
      // way round ("Tom has the same number as Lily.") the retrieval model learned no hop at all.
      const auto names = draw_names(draws, kChainLength * units);
      const auto values = draw_values(draws, units);
      for (int64_t chain = 0; chain < units; ++chain) {
        auto& group = text.groups.emplace_back();
        const auto chain_names = slice(names, chain * kChainLength, kChainLength);
        const auto& value = values[static_cast<size_t>(chain)];
        group.push_back("The number " + value + " went to " + chain_names[0] + ".");
        for (int64_t i = 1; i < kChainLength; ++i)
          group.push_back(chain_names[static_cast<size_t>(i - 1)] + " gave the number to " + chain_names[static_cast<size_t>(i)] + ".");
        text.questions.push_back({"Who has the number " + value + "? They are", answer_text(listed(chain_names, ", "))});
      }
      break;
    }
  }
  return text;
}

// The ids of " " + text as it follows earlier text: SentencePiece adds that space itself.
std::vector<int32_t> continuation_ids(const runtime::Tokenizer& tokenizer, const std::string& text) {
  const auto& vocabulary = tokenizer.vocabulary();
  if (vocabulary.model == runtime::TokenizerModel::SentencePiece && vocabulary.add_space_prefix)
    return tokenizer.encode(text, false);
  return tokenizer.encode(" " + text, false);
}

// Where a fact's value (its last word: the number or the name an answer copies) starts among
// the fact's tokens: the last token from which the decoded rest still holds the whole word.
int64_t value_offset(const runtime::Tokenizer& tokenizer, const std::vector<int32_t>& ids, const std::string& fact) {
  const auto stop = fact.rfind('.'), space = fact.rfind(' ', stop);
  const std::string value = fact.substr(space + 1, stop - space - 1);
  for (auto k = static_cast<int64_t>(ids.size()) - 1; k > 0; --k)
    if (tokenizer.decode(std::span(ids).subspan(static_cast<size_t>(k))).find(value) != std::string::npos) return k;
  return 0;
}

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\n");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\n") - first + 1);
}

void append(std::vector<int32_t>& ids, const std::vector<int32_t>& more) { ids.insert(ids.end(), more.begin(), more.end()); }

}  // namespace

RetrievalTask parse_retrieval_task(std::string_view name) {
  for (const auto& entry : kTasks)
    if (name == entry.name) return entry.task;
  throw runtime::ConfigError("unknown task '" + std::string(name) + "': use niah, multikey, multivalue, multiquery or vt");
}

std::string_view retrieval_task_name(RetrievalTask task) {
  for (const auto& entry : kTasks)
    if (entry.task == task) return entry.name;
  throw runtime::ContractError("retrieval task without a name");
}

Haystack::Haystack(const std::vector<std::string>& texts, const runtime::Tokenizer& tokenizer) {
  for (const auto& text : texts) {
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find_first_of(".!?", start);
      end = end == std::string::npos ? text.size() : end + 1;
      const auto sentence = trimmed(std::string_view(text).substr(start, end - start));
      if (!sentence.empty()) sentences_.push_back(continuation_ids(tokenizer, std::string(sentence)));
      start = end;
    }
  }
  if (sentences_.empty()) throw runtime::InvalidRequestError("the haystack texts hold no sentence");
}

TaskInstance make_task_instance(RetrievalTask task, int64_t length, const Haystack& haystack,
                                const runtime::Tokenizer& tokenizer, uint64_t seed, int64_t index, const TaskShape& shape) {
  const std::string task_name(retrieval_task_name(task));
  const int64_t units = shape.units == 0 ? own_units(task) : shape.units;
  if (units < 1 || (task == RetrievalTask::SingleNeedle && units != 1))
    throw runtime::ConfigError("task " + task_name + " plants " + (task == RetrievalTask::SingleNeedle ? "exactly one fact (multikey plants more)" : "at least one unit") +
                               "; asked for " + std::to_string(units));
  if (units * names_per_unit(task) > static_cast<int64_t>(kNames.size()))
    throw runtime::ConfigError("task " + task_name + " has names for at most " + std::to_string(static_cast<int64_t>(kNames.size()) / names_per_unit(task)) +
                               " units; asked for " + std::to_string(units));
  Draws draws(seed ^ (0x51ED270B7A3F9C1Dull * static_cast<uint64_t>(index + 1)) ^ (static_cast<uint64_t>(task) << 56));
  const TaskText text = task_text(task, units, draws);
  // The questions asked, in the order asked: every unit's in a drawn order, or the first unit's.
  std::vector<int64_t> asked_units = {0};
  if (shape.ask_every_unit) {
    asked_units.clear();
    for (int64_t unit = 0; unit < units; ++unit) asked_units.push_back(unit);
    for (size_t i = asked_units.size(); i > 1; --i)
      std::swap(asked_units[i - 1], asked_units[static_cast<size_t>(draws.below(static_cast<int64_t>(i)))]);
  }
  std::vector<Question> asked;
  for (const int64_t unit : asked_units) asked.push_back(text.questions[static_cast<size_t>(unit)]);
  TaskInstance instance;
  instance.task = task;
  instance.answer = asked.back().answer;
  std::vector<std::vector<int32_t>> questions, answers;
  for (const auto& question : asked) {
    questions.push_back(continuation_ids(tokenizer, question.text));
    answers.push_back(continuation_ids(tokenizer, std::string(trimmed(question.answer))));
  }
  instance.answer_ids = answers.back();
  std::vector<std::vector<std::vector<int32_t>>> groups;
  std::vector<std::vector<int64_t>> value_offsets;  // groups' shape
  const bool with_bos = tokenizer.vocabulary().add_bos && tokenizer.bos_id() >= 0;
  int64_t fact_count = 0, fixed = with_bos ? 1 : 0;
  for (const auto& group : text.groups) {
    auto& ids = groups.emplace_back();
    auto& offsets = value_offsets.emplace_back();
    for (const auto& fact : group) {
      ids.push_back(continuation_ids(tokenizer, fact));
      offsets.push_back(value_offset(tokenizer, ids.back(), fact));
      fixed += static_cast<int64_t>(ids.back().size());
      ++fact_count;
    }
  }
  for (size_t i = 0; i < asked.size(); ++i) fixed += static_cast<int64_t>(questions[i].size() + answers[i].size());
  if (length < fixed)
    throw runtime::InvalidRequestError("task " + task_name + " needs at least " + std::to_string(fixed) +
                                       " tokens for its facts and questions; asked for " + std::to_string(length));

  // The haystack: sentences in order from a random one, the last cut to fill the length exactly.
  const auto& sentences = haystack.sentences();
  std::vector<std::vector<int32_t>> cut;
  int64_t filler = length - fixed;
  for (int64_t next = draws.below(static_cast<int64_t>(sentences.size())); filler > 0; next = (next + 1) % static_cast<int64_t>(sentences.size())) {
    const auto& sentence = sentences[static_cast<size_t>(next)];
    const int64_t take = std::min<int64_t>(filler, static_cast<int64_t>(sentence.size()));
    cut.emplace_back(sentence.begin(), sentence.begin() + take);
    filler -= take;
  }

  // Each fact goes before a sentence (or at the end), at boundaries drawn independently; sorted
  // boundaries are dealt to the groups in a random interleaving that keeps each group's order.
  std::vector<int64_t> boundaries;
  for (int64_t i = 0; i < fact_count; ++i) boundaries.push_back(draws.below(static_cast<int64_t>(cut.size()) + 1));
  std::sort(boundaries.begin(), boundaries.end());
  std::vector<size_t> taken(groups.size(), 0);
  struct Placed {
    int64_t group;
    const std::vector<int32_t>* ids;
    int64_t value_offset;
  };
  std::vector<std::vector<Placed>> at(cut.size() + 1);
  for (int64_t remaining = fact_count; remaining > 0; --remaining) {
    int64_t pick = draws.below(remaining);
    size_t g = 0;
    for (;; ++g) {
      const auto left = static_cast<int64_t>(groups[g].size() - taken[g]);
      if (pick < left) break;
      pick -= left;
    }
    at[static_cast<size_t>(boundaries[static_cast<size_t>(fact_count - remaining)])].push_back({static_cast<int64_t>(g), &groups[g][taken[g]], value_offsets[g][taken[g]]});
    ++taken[g];
  }

  if (with_bos) instance.prompt.push_back(tokenizer.bos_id());
  for (size_t b = 0; b <= cut.size(); ++b) {
    for (const Placed& fact : at[b]) {
      const auto begin = static_cast<int64_t>(instance.prompt.size());
      instance.fact_positions.push_back(begin);
      append(instance.prompt, *fact.ids);
      if (unit_of_group(task, fact.group) == asked_units.back())
        instance.needed_values.push_back({begin + fact.value_offset, static_cast<int64_t>(instance.prompt.size())});
    }
    if (b < cut.size()) append(instance.prompt, cut[b]);
  }
  for (size_t i = 0; i < asked.size(); ++i) {
    append(instance.prompt, questions[i]);
    const auto begin = static_cast<int64_t>(instance.prompt.size());
    instance.answer_spans.push_back({begin, begin + static_cast<int64_t>(answers[i].size())});
    if (i + 1 < asked.size()) append(instance.prompt, answers[i]);
  }
  return instance;
}

bool answers(const TaskInstance& instance, std::string_view completion) {
  const auto end = completion.find('.');
  if (end == std::string_view::npos) return false;
  return trimmed(completion.substr(0, end + 1)) == trimmed(instance.answer);
}

}  // namespace snapstream::eval
