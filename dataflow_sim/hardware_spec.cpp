// Reading hardware configs. A value may sit under "published", "assumed" or "calibrated" (each
// as {"value", "source"}) or at the top level; a system file names its socket's file.
#include "dataflow_sim/hardware_spec.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "dataflow_sim/errors.h"

namespace snapstream::dataflow_sim {
namespace {

using nlohmann::json;

json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw SpecError("cannot open hardware config " + path.string());
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw SpecError(path.string() + ": " + e.what());
  }
}

const json* find_value(const json& config, const std::string& key) {
  for (const char* section : {"calibrated", "published", "assumed"})
    if (config.contains(section) && config[section].contains(key)) return &config[section][key];
  if (config.contains(key)) return &config[key];
  return nullptr;
}

double number(const json& config, const std::filesystem::path& path, const std::string& key) {
  const json* found = find_value(config, key);
  if (found == nullptr) throw SpecError(path.string() + ": missing '" + key + "'");
  const json& value = found->is_object() ? found->value("value", json()) : *found;
  if (!value.is_number() || value.get<double>() < 0)
    throw SpecError(path.string() + ": '" + key + "' must be a non-negative number");
  return value.get<double>();
}

double number_or(const json& config, const std::filesystem::path& path, const std::string& key, double fallback) {
  return find_value(config, key) == nullptr ? fallback : number(config, path, key);
}

DeviceSpec read_device(const json& c, const std::filesystem::path& path) {
  DeviceSpec d;
  d.name = c.value("name", path.stem().string());
  const std::string execution = c.value("execution", "fused_layers");
  if (execution == "kernel_per_op")
    d.execution = ExecutionModel::KernelPerOp;
  else if (execution != "fused_layers")
    throw SpecError(path.string() + ": 'execution' must be 'fused_layers' or 'kernel_per_op', not '" + execution + "'");
  d.peak_flops = number(c, path, "peak_bf16_flops");
  d.hbm_bytes = number(c, path, "hbm_bytes");
  d.hbm_bytes_per_s = number(c, path, "hbm_bytes_per_s");
  d.ddr_bytes = number_or(c, path, "ddr_bytes", 0);
  d.ddr_bytes_per_s = number_or(c, path, "ddr_bytes_per_s", 0);
  d.activation_bytes = number_or(c, path, "activation_bytes", 2);
  d.hbm_efficiency = number(c, path, "hbm_efficiency");
  d.ddr_efficiency = number_or(c, path, "ddr_efficiency", d.hbm_efficiency);
  d.compute_efficiency = number(c, path, "compute_efficiency");
  d.kernel_call_seconds = number(c, path, "kernel_call_seconds");
  if (d.execution == ExecutionModel::FusedLayers) {
    d.pcus = static_cast<int64_t>(number(c, path, "pcus"));
    d.pmus = static_cast<int64_t>(number(c, path, "pmus"));
    d.sram_bytes_per_pmu = static_cast<int64_t>(number(c, path, "sram_bytes_per_pmu"));
    d.on_chip_network_bytes_per_s = number_or(c, path, "on_chip_network_bytes_per_s", 0);
    d.kv_tile_positions = static_cast<int64_t>(number(c, path, "kv_tile_positions"));
    d.weight_tile_rows = static_cast<int64_t>(number(c, path, "weight_tile_rows"));
    d.stage_fill_seconds = number(c, path, "stage_fill_seconds");
    if (d.pcus < 1 || d.pmus < 1 || d.sram_bytes_per_pmu < 1 || d.kv_tile_positions < 1 || d.weight_tile_rows < 1)
      throw SpecError(path.string() + ": a dataflow socket needs PCUs, PMUs, SRAM and tile sizes above zero");
  }
  if (d.peak_flops <= 0 || d.hbm_bytes_per_s <= 0 || d.hbm_efficiency <= 0 || d.compute_efficiency <= 0)
    throw SpecError(path.string() + ": peak FLOPs, HBM bandwidth and their efficiencies must be above zero");
  return d;
}

}  // namespace

SystemSpec load_system(const std::filesystem::path& path) {
  const json c = read_json(path);
  SystemSpec s;
  s.name = c.value("name", path.stem().string());
  if (c.contains("socket")) {
    if (!c["socket"].is_string()) throw SpecError(path.string() + ": 'socket' must name a socket config");
    const auto socket_path = path.parent_path() / (c["socket"].get<std::string>() + ".json");
    s.device = read_device(read_json(socket_path), socket_path);
  } else {
    s.device = read_device(c, path);
  }
  s.devices = static_cast<int32_t>(number_or(c, path, c.contains("sockets") ? "sockets" : "devices", 1));
  s.devices_per_node = static_cast<int32_t>(number_or(c, path, "devices_per_node", s.devices));
  s.link_bytes_per_s = number_or(c, path, "link_bytes_per_s", 0);
  s.link_latency_s = number_or(c, path, "link_latency_s", 0);
  if (s.devices < 1 || s.devices_per_node < 1) throw SpecError(path.string() + ": a system needs at least one device per node");
  if (s.devices > 1 && s.link_bytes_per_s <= 0) throw SpecError(path.string() + ": a multi-device system needs 'link_bytes_per_s'");
  return s;
}

}  // namespace snapstream::dataflow_sim
