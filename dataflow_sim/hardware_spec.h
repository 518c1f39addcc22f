// The hardware a graph is priced on, read from configs/hardware: one socket (or GPU) and the
// system of several joined by links. Every number comes from the config files.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace snapstream::dataflow_sim {

// How a device runs a decoder layer: a dataflow socket fuses the whole layer into one kernel
// call (and can loop it); a GPU launches one kernel per op.
enum class ExecutionModel : uint8_t { FusedLayers, KernelPerOp };

struct DeviceSpec {
  std::string name;
  ExecutionModel execution = ExecutionModel::FusedLayers;
  int64_t pcus = 0;                 // compute units (0 on a GPU: no placement)
  int64_t pmus = 0;                 // memory units
  int64_t sram_bytes_per_pmu = 0;
  double peak_flops = 0;            // BF16
  double hbm_bytes = 0;
  double hbm_bytes_per_s = 0;
  double ddr_bytes = 0;             // 0 when the device has no second memory tier
  double ddr_bytes_per_s = 0;
  double activation_bytes = 2;      // bytes per activation value moved between units or sockets
  double on_chip_network_bytes_per_s = 0;  // the mesh between PCUs and PMUs (0: not a limit)
  int64_t kv_tile_positions = 0;    // cached positions per KV tile streamed into SRAM
  int64_t weight_tile_rows = 0;     // weight rows per tile streamed into SRAM
  // Calibrated: the fractions of peak a streaming kernel reaches, the cost of one kernel call
  // (launch and synchronisation) and of one pipeline stage's fill.
  double hbm_efficiency = 1;
  double ddr_efficiency = 1;
  double compute_efficiency = 1;
  double kernel_call_seconds = 0;
  double stage_fill_seconds = 0;

  double sram_bytes() const { return static_cast<double>(pmus) * static_cast<double>(sram_bytes_per_pmu); }
};

struct SystemSpec {
  std::string name;
  DeviceSpec device;
  int32_t devices = 1;
  int32_t devices_per_node = 1;     // all-to-all inside a node; nodes joined to each other
  double link_bytes_per_s = 0;      // per device, each direction
  double link_latency_s = 0;        // per hop of a collective

  // Hops of one collective phase: one inside a node, one more across nodes.
  int32_t collective_hops() const { return devices > devices_per_node ? 2 : 1; }
};

// Reads configs/hardware/<file>: a system file (naming its socket's file) or a lone socket.
// Throws SpecError naming the file and the missing or bad value.
SystemSpec load_system(const std::filesystem::path& path);

}  // namespace snapstream::dataflow_sim
