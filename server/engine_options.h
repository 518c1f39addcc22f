// The options every engine-running command shares: slots, tensor parallelism, graph listing
// and the SnapStream cache; and the start-up report of graphs and KV memory.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "runtime/graph_runner.h"
#include "runtime/model.h"
#include "runtime/snapstream_config.h"

namespace snapstream::server {

struct EngineFlags {
  SnapStreamConfig cache;
  GraphPlan graphs;
  bool list_graphs = false;
};

// Registers --tp, --no-kernel-looping, --list-graphs and the cache options.
void add_engine_options(CLI::App* command, EngineFlags& flags);

// The compiled graphs with their arena sizes, and the KV cache plan (bytes per slot and in
// all, SnapStream against the full cache), as printed by --list-graphs and logged at start-up.
std::string describe_plan(const Model& model, const GraphRunner& runner, const SlotKvCache& cache);

}  // namespace snapstream::server
