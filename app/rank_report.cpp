// Rank time reports: text lines and JSON.
#include "app/rank_report.h"

#include <fmt/format.h>

namespace snapstream::app {
namespace {

double share(const runtime::RankSeconds& r) { return r.steps > 0.0 ? r.collectives / r.steps : 0.0; }

}  // namespace

std::string describe_rank_seconds(const std::vector<runtime::RankSeconds>& ranks) {
  std::string text;
  for (size_t rank = 0; rank < ranks.size(); ++rank)
    text += fmt::format("rank {}: {:.3f} s in steps, {:.3f} s ({:.1f}%) of them in collectives\n", rank, ranks[rank].steps,
                        ranks[rank].collectives, 100.0 * share(ranks[rank]));
  return text;
}

nlohmann::json rank_seconds_json(const std::vector<runtime::RankSeconds>& ranks) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t rank = 0; rank < ranks.size(); ++rank)
    out.push_back({{"rank", rank},
                   {"step_seconds", ranks[rank].steps},
                   {"collective_seconds", ranks[rank].collectives},
                   {"collective_share", share(ranks[rank])}});
  return out;
}

}  // namespace snapstream::app
