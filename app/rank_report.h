// Where each tensor-parallel rank's time went, for the reports of generate, batch and bench.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/step_relay.h"

namespace snapstream::app {

// One line per rank: seconds in steps and the collectives' share of them. Empty for no ranks.
std::string describe_rank_seconds(const std::vector<runtime::RankSeconds>& ranks);
// [{"rank", "step_seconds", "collective_seconds", "collective_share"}, ...].
nlohmann::json rank_seconds_json(const std::vector<runtime::RankSeconds>& ranks);

}  // namespace snapstream::app
