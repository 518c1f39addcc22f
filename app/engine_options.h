// The options every engine-running command shares: slots, tensor parallelism, graph listing
// and the SnapStream cache; and the start-up report of graphs and KV memory.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "runtime/engine.h"
#include "runtime/graph_runner.h"
#include "runtime/model.h"
#include "runtime/snapstream_config.h"

namespace snapstream::app {

struct EngineFlags {
  runtime::SnapStreamConfig cache;
  runtime::GraphPlan graphs;
  bool list_graphs = false;
  std::string system = "sn40l";  // hardware config the steps are priced on; "none": no emulation
  bool system_given = false;     // --system was on the command line (not the default)
  std::string emulate;           // model config to price steps as (a proxy); empty: the served model
  bool pace = false;
};

// Registers --no-row-groups (GraphPlan::row_groups).
void add_row_groups_flag(CLI::App* command, runtime::GraphPlan& plan);

// Registers --tp, --no-kernel-looping, --no-row-groups, --list-graphs and the cache options.
void add_engine_options(CLI::App* command, EngineFlags& flags);

// Registers --system, --emulate and --pace, for the commands that run the engine.
void add_emulation_options(CLI::App* command, EngineFlags& flags);

// The engine's emulated device from the flags (configs loaded, errors as ConfigError).
void apply_emulation(const EngineFlags& flags, runtime::EngineOptions& options);

// The compiled graphs with their arena sizes, and the KV cache plan (bytes per slot and in
// all, SnapStream against the full cache), as printed by --list-graphs and logged at start-up.
std::string describe_plan(const runtime::Model& model, const runtime::GraphRunner& runner, const runtime::SlotKvCache& cache);

}  // namespace snapstream::app
