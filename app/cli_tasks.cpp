// `snapstream tasks`: writes retrieval task instances (eval/retrieval_tasks.h) as JSONL token
// ids, the data a retrieval model is trained on and the instances `eval` runs, for inspection.
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/commands.h"
#include "app/model_options.h"
#include "eval/eval_texts.h"
#include "eval/retrieval_tasks.h"
#include "kernels/thread_pool.h"
#include "runtime/errors.h"

namespace snapstream::app {
namespace {

struct TasksArgs {
  ModelFlags model;
  std::vector<std::string> tasks = {"niah"};
  std::vector<int64_t> lengths = {1024};
  int64_t count = 0;
  uint64_t seed = 0;
  std::string texts;
  int64_t generate = 0;
  eval::TaskShape shape;
  std::string out;
};

void run_tasks_command(const TasksArgs& a) {
  if (a.texts.empty() == (a.generate == 0)) throw runtime::ConfigError("give either --texts FILE.jsonl or --generate N");
  std::vector<eval::RetrievalTask> tasks;
  for (const auto& name : a.tasks) tasks.push_back(eval::parse_retrieval_task(name));
  // The model gives the tokenizer and samples the haystack; the instances may be longer than its
  // context, since they are meant for training models of other lengths on the same vocabulary.
  const auto model = load_model_logged(a.model);
  kernels::ThreadPool pool(a.model.threads);
  const eval::Haystack haystack(eval::haystack_texts(*model, model_file_name(a.model), pool, a.texts, a.generate, a.seed).texts, model->tokenizer);
  std::ofstream out(a.out);
  if (!out) throw runtime::InvalidRequestError("cannot write " + a.out);
  // Instance i takes the tasks and lengths in turn, so any prefix of the file mixes them evenly.
  for (int64_t i = 0; i < a.count; ++i) {
    const auto task = tasks[static_cast<size_t>(i) % tasks.size()];
    const int64_t length = a.lengths[static_cast<size_t>(i / static_cast<int64_t>(tasks.size())) % a.lengths.size()];
    const auto instance = eval::make_task_instance(task, length, haystack, model->tokenizer, a.seed, i, a.shape);
    nlohmann::json spans = nlohmann::json::array();
    for (const auto& span : instance.answer_spans) spans.push_back({span.begin, span.end});
    out << nlohmann::json{{"task", eval::retrieval_task_name(task)}, {"length", length}, {"prompt_ids", instance.prompt},
                          {"answer_ids", instance.answer_ids}, {"answer", instance.answer},
                          {"fact_positions", instance.fact_positions}, {"answer_spans", spans}}
               .dump()
        << "\n";
  }
  if (!out.flush()) throw runtime::InvalidRequestError("writing " + a.out + " failed");
  std::cout << "wrote " << a.count << " instances from " << haystack.sentences().size() << " haystack sentences to " << a.out << "\n";
}

}  // namespace

void add_tasks_command(CLI::App& app) {
  auto args = std::make_shared<TasksArgs>();
  CLI::App* cmd = app.add_subcommand("tasks", "Write retrieval task instances (facts in a haystack, a question) as JSONL token ids");
  add_model_options(cmd, args->model);
  cmd->add_option("--tasks", args->tasks, "niah, multikey, multivalue, multiquery, vt (taken in turn)")->delimiter(',')->capture_default_str();
  cmd->add_option("--lengths", args->lengths, "prompt + answer tokens per instance (taken in turn)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--count", args->count, "instances to write")->required()->check(CLI::PositiveNumber);
  cmd->add_option("--seed", args->seed, "seed of the instances and of --generate's sampling")->capture_default_str();
  auto* texts = cmd->add_option("--texts", args->texts, "haystack: JSONL of {\"text\": ...}")->check(CLI::ExistingFile);
  cmd->add_option("--generate", args->generate, "haystack: sample N stories from the model instead")->check(CLI::PositiveNumber)->excludes(texts);
  cmd->add_option("--units", args->shape.units,
                  "what the questions are about per instance: facts (multikey), names (multivalue), pairs (multiquery), "
                  "chains (vt); 0: each task's own")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_flag("--ask-every-unit", args->shape.ask_every_unit,
                "ask about every unit, each question followed by its answer (training data), instead of the first alone");
  cmd->add_option("--out", args->out, "the JSONL file to write")->required();
  cmd->callback([args] { run_tasks_command(*args); });
}

}  // namespace snapstream::app
