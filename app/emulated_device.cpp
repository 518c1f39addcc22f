// Start-up pricing of the engine's graphs. A static graph's decode attention covers every
// cache entry whatever its fill, so a decode graph has one price; a prefill chunk's attention
// grows with the positions before it, so prefill graphs are priced at both ends of the
// context and interpolated between (attention's work is linear in those positions; the
// overlap of compute and memory makes the total only nearly so).
#include "app/emulated_device.h"

#include <algorithm>

#include "dataflow_sim/errors.h"
#include "dataflow_sim/memory_plan.h"
#include "dataflow_sim/step_pricer.h"
#include "graph/decoder_builder.h"
#include "graph/errors.h"
#include "graph/passes.h"
#include "runtime/errors.h"

namespace snapstream::app {

using dataflow_sim::SimulationError;
namespace {

// The accelerator computes in BF16: f32 checkpoints are priced as BF16.
kernels::DType device_dtype(kernels::DType dtype) { return dtype == kernels::DType::F32 ? kernels::DType::BF16 : dtype; }

int32_t pick_tp(const graph::ModelShape& shape, const EmulationOptions& options) {
  if (options.tp > 0) return options.tp;
  // The most devices of the system the shape divides among.
  for (int32_t tp = options.system.devices; tp > 1; --tp) {
    try {
      graph::build_decoder_graph(shape, {graph::Phase::Decode, 1, 1}, tp);
      return tp;
    } catch (const graph::GraphError&) {
    }
  }
  return 1;
}

}  // namespace

EmulatedDevice::EmulatedDevice(const EmulationOptions& options, const graph::GraphCache& served, int64_t max_context) {
  if (served.graphs().empty()) throw SimulationError("there are no compiled graphs to price");
  const graph::ModelShape& served_shape = served.graphs().front().shape;
  graph::ModelShape shape = options.proxy ? *options.proxy : served_shape;
  shape.kv_capacity = served_shape.kv_capacity;
  shape.weight_dtype = device_dtype(shape.weight_dtype);
  shape.kv_dtype = device_dtype(shape.kv_dtype);
  footprint_.model = options.proxy ? options.proxy->name : "the served model";
  footprint_.system = options.system.name;
  footprint_.proxy = options.proxy.has_value();
  footprint_.tp = pick_tp(shape, options);
  if (footprint_.tp > options.system.devices)
    throw SimulationError("tensor parallelism of " + std::to_string(footprint_.tp) + " exceeds " + options.system.name + "'s " +
                          std::to_string(options.system.devices) + " devices");
  const graph::CompileOptions compile_options{footprint_.tp, options.kernel_looping};
  auto compile = [&](const graph::GraphKey& key) {
    try {
      return graph::compile(shape, key, compile_options);
    } catch (const graph::GraphError& e) {
      throw SimulationError("the emulated model cannot be built for " + std::to_string(footprint_.tp) + " devices: " + e.what());
    }
  };

  const int64_t slots = served.max_decode_batch();
  const graph::Graph sizing = compile({graph::Phase::Decode, slots, 1});
  const dataflow_sim::MemoryPlan plan = dataflow_sim::plan_device_memory(sizing, options.system.device, shape.kv_capacity, slots);
  const dataflow_sim::StepPricer pricer(options.system, plan.expert_ddr_fraction);
  footprint_.kv_bytes_per_sequence = plan.kv_bytes_per_sequence;
  footprint_.weight_hbm_bytes = plan.hbm_bytes - plan.kv_bytes_per_sequence * static_cast<double>(slots);

  for (const graph::Graph& g : served.graphs()) {
    const graph::GraphKey key = g.key;
    const graph::Graph priced = key.phase == graph::Phase::Decode && key.batch == slots ? sizing : compile(key);
    Priced p;
    if (key.phase == graph::Phase::Decode) {
      const dataflow_sim::StepPrice step = pricer.price(priced, shape.kv_capacity, shape.kv_capacity);
      p.at_start = p.at_end = step.seconds();
      footprint_.sram_bytes = std::max(footprint_.sram_bytes, step.sram_bytes);
      if (key.batch == slots) {
        footprint_.pcu_utilisation = step.flops / (options.system.device.peak_flops * step.seconds());
      }
    } else {
      p.span = std::max<int64_t>(0, max_context - key.length);
      const dataflow_sim::StepPrice first = pricer.price(priced, 0, shape.kv_capacity);
      p.at_start = first.seconds();
      p.at_end = p.span > 0 ? pricer.price(priced, p.span, shape.kv_capacity).seconds() : p.at_start;
      footprint_.sram_bytes = std::max(footprint_.sram_bytes, first.sram_bytes);
    }
    prices_[{static_cast<int>(key.phase), key.phase == graph::Phase::Decode ? key.batch : key.length}] = p;
  }
  const double sram = options.system.device.sram_bytes();
  footprint_.pmu_utilisation = sram > 0 ? footprint_.sram_bytes / sram : 0;
  const runtime::EmulatedFootprint& f = footprint_;
  footprint_.description = (f.proxy ? "proxy: steps priced as " + f.model + " on " : "steps priced on ") + f.system + " (TP " +
                           std::to_string(f.tp) + ")" + (f.proxy ? ", tokens computed by the served model" : "");
}

double EmulatedDevice::seconds(const graph::GraphKey& key, int64_t first_position) const {
  const auto it = prices_.find({static_cast<int>(key.phase), key.phase == graph::Phase::Decode ? key.batch : key.length});
  if (it == prices_.end()) throw SimulationError("no price for a graph that was not compiled at start-up");
  const Priced& p = it->second;
  if (p.span == 0) return p.at_start;
  const double share = std::clamp(static_cast<double>(first_position) / static_cast<double>(p.span), 0.0, 1.0);
  return p.at_start + (p.at_end - p.at_start) * share;
}

runtime::StepClockFactory emulated_step_clock(const EmulationOptions& options) {
  return [options](const graph::GraphCache& graphs, int64_t max_context) -> std::unique_ptr<runtime::StepClock> {
    try {
      return std::make_unique<EmulatedDevice>(options, graphs, max_context);
    } catch (const SimulationError& e) {
      throw runtime::ConfigError(e.what());
    }
  };
}

}  // namespace snapstream::app
