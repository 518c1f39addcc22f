// Retrieval task instances: exact lengths, the same instance from the same seed, facts where the
// positions say with their order kept, answers that follow from the facts, and the exact-match scorer.
#include <catch2/catch.hpp>
#include <regex>
#include <set>

#include "eval/retrieval_tasks.h"
#include "runtime/errors.h"
#include "runtime/model.h"
#include "tests/support/stories_model.h"

using namespace snapstream;
using eval::RetrievalTask;

namespace {

const std::vector<std::string> kStories = {
    "Once upon a time there was a little girl named Lily. She liked to play in the park with her dog. One day it "
    "started to rain! Lily ran home fast. Was the dog happy? Yes, he was happy to be dry.",
    "Tom had a big red ball. He threw it to his friend Ben. They played all day in the sun."};

const RetrievalTask kAll[] = {RetrievalTask::SingleNeedle, RetrievalTask::MultiKey, RetrievalTask::MultiValue,
                              RetrievalTask::MultiQuery, RetrievalTask::VariableTracking};

std::string text_of(const runtime::Tokenizer& tokenizer, const std::vector<int32_t>& ids, size_t begin, size_t end) {
  return tokenizer.decode(std::vector<int32_t>(ids.begin() + static_cast<long>(begin), ids.begin() + static_cast<long>(end)));
}

struct Match {
  std::string text;  // the first group
  long position = 0;   // where the whole match starts
};

Match first_group(const std::string& text, const std::string& pattern) {
  std::smatch match;
  INFO(pattern);
  REQUIRE(std::regex_search(text, match, std::regex(pattern)));
  return {match[1].str(), static_cast<long>(match.position(0))};
}

// A multi-value name's numbers in the order its facts appear, checking each fact's ordinal is
// the next one.
std::vector<std::string> ordinal_values(const std::string& text, const std::string& name_pattern) {
  static const std::vector<std::string> ordinals = {"first", "second", "third", "fourth"};
  std::vector<std::string> values;
  const std::regex fact("The ([a-z]+) secret number of " + name_pattern + " is ([0-9]{4})\\.");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), fact); it != std::sregex_iterator(); ++it) {
    CHECK(values.size() < ordinals.size());
    if (values.size() < ordinals.size()) CHECK((*it)[1].str() == ordinals[values.size()]);
    values.push_back((*it)[2].str());
  }
  return values;
}

}  // namespace

TEST_CASE("retrieval tasks: exact length, deterministic per seed, facts at their positions", "[eval]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  const auto& tokenizer = model->tokenizer;
  const eval::Haystack haystack(kStories, tokenizer);
  CHECK(haystack.sentences().size() == 9);
  for (const auto task : kAll) {
    for (const int64_t length : {256, 512, 1024}) {
      INFO(eval::retrieval_task_name(task) << " at " << length);
      const auto a = eval::make_task_instance(task, length, haystack, tokenizer, 7, 3);
      const auto b = eval::make_task_instance(task, length, haystack, tokenizer, 7, 3);
      CHECK(a.prompt == b.prompt);
      CHECK(a.answer == b.answer);
      CHECK(static_cast<int64_t>(a.prompt.size() + a.answer_ids.size()) == length);
      CHECK(a.prompt[0] == tokenizer.bos_id());
      CHECK(eval::make_task_instance(task, length, haystack, tokenizer, 8, 3).prompt != a.prompt);
      CHECK(eval::make_task_instance(task, length, haystack, tokenizer, 7, 4).prompt != a.prompt);
      // The decoded prompt holds every fact where fact_positions says, and ends in the question.
      const std::string prompt = tokenizer.decode(a.prompt);
      const size_t facts = task == RetrievalTask::SingleNeedle ? 1 : task == RetrievalTask::VariableTracking ? 8 : 4;
      REQUIRE(a.fact_positions.size() == facts);
      for (const auto position : a.fact_positions) {
        const std::string fact = text_of(tokenizer, a.prompt, static_cast<size_t>(position), a.prompt.size());
        CHECK(std::regex_search(fact, std::regex("^ ?(The secret number of|The (first|second|third|fourth) secret number of|The number [0-9]{4} went to|[A-Z][a-z]+ gave the number to)")));
      }
      CHECK(std::regex_search(prompt, std::regex("\\? (The secret numbers? of [A-Za-z]+ (is|are)|They are)$")));
      // The answer tokens decode to the answer when they follow the prompt.
      auto whole = a.prompt;
      whole.insert(whole.end(), a.answer_ids.begin(), a.answer_ids.end());
      CHECK(tokenizer.decode(whole) == prompt + a.answer);
    }
  }
}

TEST_CASE("retrieval tasks: each answer follows from the planted facts", "[eval]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  const auto& tokenizer = model->tokenizer;
  const eval::Haystack haystack(kStories, tokenizer);
  for (int64_t index = 0; index < 20; ++index) {
    INFO("instance " << index);
    const auto instance = [&](RetrievalTask task) { return eval::make_task_instance(task, 400, haystack, tokenizer, 1, index); };
    {
      const auto t = instance(RetrievalTask::MultiKey);
      const std::string prompt = tokenizer.decode(t.prompt);
      const auto asked = first_group(prompt, "What is the secret number of ([A-Za-z]+)\\?");
      CHECK(t.answer == " " + first_group(prompt, "The secret number of " + asked.text + " is ([0-9]{4})\\.").text + ".");
    }
    {
      // Multi-value: the numbers by their ordinals, which follow the order the facts appear in.
      const auto t = instance(RetrievalTask::MultiValue);
      const std::string prompt = tokenizer.decode(t.prompt);
      const auto values = ordinal_values(prompt, "[A-Za-z]+");
      REQUIRE(values.size() == 4);
      CHECK(t.answer == " first " + values[0] + ", second " + values[1] + ", third " + values[2] + ", fourth " + values[3] + ".");
    }
    {
      // Variable tracking: the asked chain's names in order, each introduced before it is referred to.
      const auto t = instance(RetrievalTask::VariableTracking);
      const std::string prompt = tokenizer.decode(t.prompt);
      const auto value = first_group(prompt, "Who has the number ([0-9]{4})\\?");
      auto link = first_group(prompt, "The number " + value.text + " went to ([A-Za-z]+)\\.");
      std::vector<std::string> chain = {link.text};
      for (int hop = 0; hop < 3; ++hop) {
        const auto next = first_group(prompt, chain.back() + " gave the number to ([A-Za-z]+)\\.");
        CHECK(link.position < next.position);
        chain.push_back(next.text);
        link = next;
      }
      CHECK(t.answer == " " + chain[0] + ", " + chain[1] + ", " + chain[2] + ", " + chain[3] + ".");
    }
  }
}

TEST_CASE("retrieval tasks: names, too-short lengths and the exact-match scorer", "[eval]") {
  CHECK(eval::parse_retrieval_task("vt") == RetrievalTask::VariableTracking);
  CHECK(eval::retrieval_task_name(RetrievalTask::MultiQuery) == "multiquery");
  CHECK_THROWS_AS(eval::parse_retrieval_task("needle"), runtime::ConfigError);

  eval::TaskInstance instance;
  instance.answer = " 4821.";
  CHECK(eval::answers(instance, " 4821."));
  CHECK(eval::answers(instance, "4821. Then Lily went home."));
  CHECK_FALSE(eval::answers(instance, " 4822."));
  CHECK_FALSE(eval::answers(instance, " 4821"));  // never finished its sentence
  CHECK_FALSE(eval::answers(instance, " 48211."));
  instance.answer = " Lily, Tom, Ben, Sue.";
  CHECK(eval::answers(instance, " Lily, Tom, Ben, Sue.\n"));
  CHECK_FALSE(eval::answers(instance, " Lily, Tom, Sue, Ben."));

  const auto model = test::stories_model_or_skip();
  if (!model) return;
  CHECK_THROWS_AS(eval::Haystack({"", "   "}, model->tokenizer), runtime::InvalidRequestError);
  const eval::Haystack haystack(kStories, model->tokenizer);
  CHECK_THROWS_WITH(eval::make_task_instance(RetrievalTask::VariableTracking, 20, haystack, model->tokenizer, 1, 0),
                    Catch::Contains("task vt needs at least"));
}

TEST_CASE("retrieval tasks asking about every unit: each question followed by its answer, spans where the answers are", "[eval]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  const auto& tokenizer = model->tokenizer;
  const eval::Haystack haystack(kStories, tokenizer);
  struct Case {
    RetrievalTask task;
    int64_t units;
    const char* question;  // a question's pattern; its groups say what the answer is made of
  };
  const Case cases[] = {{RetrievalTask::MultiKey, 6, "What is the secret number of ([A-Za-z]+)\\?"},
                        {RetrievalTask::MultiValue, 3, "What are all the secret numbers of ([A-Za-z]+)\\?"},
                        {RetrievalTask::MultiQuery, 3, "What are the secret numbers of ([A-Za-z]+) and ([A-Za-z]+)\\?"},
                        {RetrievalTask::VariableTracking, 3, "Who has the number ([0-9]{4})\\?"}};
  for (const auto& c : cases) {
    INFO(eval::retrieval_task_name(c.task));
    const eval::TaskShape shape{c.units, true};
    const auto t = eval::make_task_instance(c.task, 700, haystack, tokenizer, 5, 2, shape);
    CHECK(t.prompt == eval::make_task_instance(c.task, 700, haystack, tokenizer, 5, 2, shape).prompt);
    CHECK(static_cast<int64_t>(t.prompt.size() + t.answer_ids.size()) == 700);
    REQUIRE(static_cast<int64_t>(t.answer_spans.size()) == c.units);
    auto whole = t.prompt;
    whole.insert(whole.end(), t.answer_ids.begin(), t.answer_ids.end());
    CHECK(t.answer_spans.back().begin == static_cast<int64_t>(t.prompt.size()));
    CHECK(t.answer_spans.back().end == 700);
    // Each span decodes to the completion of the question just before it, and every question
    // asked is a different one.
    std::set<std::string> asked;
    int64_t previous_end = 0;
    for (const auto& span : t.answer_spans) {
      CHECK(span.begin > previous_end);
      const std::string before = text_of(tokenizer, whole, 0, static_cast<size_t>(span.begin));
      std::string answer = text_of(tokenizer, whole, static_cast<size_t>(span.begin), static_cast<size_t>(span.end));
      if (answer.rfind(' ', 0) == 0) answer.erase(0, 1);
      std::smatch question;
      std::string last_question;
      const std::regex pattern(c.question);
      for (auto it = std::sregex_iterator(before.begin(), before.end(), pattern); it != std::sregex_iterator(); ++it)
        last_question = (*it)[0].str(), question = *it;
      REQUIRE_FALSE(last_question.empty());
      CHECK(asked.insert(last_question).second);
      CHECK(std::regex_match(answer, std::regex("[A-Za-z0-9, ]+\\.")));
      if (c.task == RetrievalTask::MultiKey)
        CHECK(answer == first_group(before, "The secret number of " + question[1].str() + " is ([0-9]{4})\\.").text + ".");
      if (c.task == RetrievalTask::MultiQuery)
        CHECK(answer == first_group(before, "The secret number of " + question[1].str() + " is ([0-9]{4})\\.").text + " and " +
                            first_group(before, "The secret number of " + question[2].str() + " is ([0-9]{4})\\.").text + ".");
      if (c.task == RetrievalTask::VariableTracking)
        CHECK(answer.rfind(first_group(before, "The number " + question[1].str() + " went to ([A-Za-z]+)\\.").text + ", ", 0) == 0);
      if (c.task == RetrievalTask::MultiValue) {
        const auto values = ordinal_values(before, question[1].str());
        REQUIRE(values.size() == 4);
        CHECK(answer == "first " + values[0] + ", second " + values[1] + ", third " + values[2] + ", fourth " + values[3] + ".");
      }
      previous_end = span.end;
    }
  }
  CHECK_THROWS_AS(eval::make_task_instance(RetrievalTask::SingleNeedle, 700, haystack, tokenizer, 5, 2, {2, true}), runtime::ConfigError);
  CHECK_THROWS_AS(eval::make_task_instance(RetrievalTask::VariableTracking, 700, haystack, tokenizer, 5, 2, {7, true}), runtime::ConfigError);
  // The default shape asks one question, about the first unit, as evaluation does.
  const auto one = eval::make_task_instance(RetrievalTask::MultiKey, 400, haystack, tokenizer, 5, 2);
  REQUIRE(one.answer_spans.size() == 1);
  CHECK(one.answer_spans[0].begin == static_cast<int64_t>(one.prompt.size()));
}

TEST_CASE("retrieval tasks: the needed values are exactly what the last question's answer copies", "[eval]") {
  const auto model = test::stories_model_or_skip();
  if (!model) return;
  const auto& tokenizer = model->tokenizer;
  const eval::Haystack haystack(kStories, tokenizer);
  for (const bool every_unit : {false, true}) {
    for (const auto task : kAll) {
      for (int64_t index = 0; index < 5; ++index) {
        INFO(eval::retrieval_task_name(task) << " instance " << index << (every_unit ? ", every unit asked" : ""));
        const eval::TaskShape shape{every_unit && task != RetrievalTask::SingleNeedle ? 2 : 0, every_unit};
        const auto t = eval::make_task_instance(task, 600, haystack, tokenizer, 9, index, shape);
        const size_t expected = task == RetrievalTask::MultiValue ? 4 : task == RetrievalTask::VariableTracking ? 4
                              : task == RetrievalTask::MultiQuery                                    ? 2 : 1;
        REQUIRE(t.needed_values.size() == expected);
        // Each needed span is the end of one fact: its last word and full stop, what the answer lists.
        std::vector<std::string> read;
        for (const auto& span : t.needed_values) {
          REQUIRE(span.begin < span.end);
          const auto fact = std::upper_bound(t.fact_positions.begin(), t.fact_positions.end(), span.begin);
          REQUIRE(fact != t.fact_positions.begin());
          const std::string whole = text_of(tokenizer, t.prompt, static_cast<size_t>(*(fact - 1)), static_cast<size_t>(span.end));
          CHECK(std::regex_search(whole, std::regex("^ ?(The|[A-Z][a-z]+ gave) [A-Za-z0-9 ]+\\.$")));  // one fact, to its end
          const std::string value = text_of(tokenizer, t.prompt, static_cast<size_t>(span.begin), static_cast<size_t>(span.end));
          read.push_back(first_group(value, "^ ?([A-Za-z0-9]+)\\.$").text);
        }
        std::string body = t.answer.substr(1, t.answer.size() - 2);  // " a, b." -> "a, b"
        if (task == RetrievalTask::MultiValue) body = std::regex_replace(body, std::regex("[a-z]+ "), "");  // drop the ordinals
        if (task == RetrievalTask::MultiQuery) {
          // Asked in the question's order, planted in the prompt's: the same two numbers.
          std::sort(read.begin(), read.end());
          const auto [first, second] = std::pair(body.substr(0, 4), body.substr(body.size() - 4));
          CHECK(read == (first < second ? std::vector{first, second} : std::vector{second, first}));
        } else {
          std::string joined;
          for (const auto& word : read) joined += (joined.empty() ? "" : ", ") + word;
          CHECK(joined == body);
        }
      }
    }
  }
}
