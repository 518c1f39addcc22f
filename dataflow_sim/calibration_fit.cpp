// Fitting the calibrated values to the published rows: coordinate descent over each
// parameter's grid (an exhaustive search grows as the product of the grids, which a handful of
// parameters already makes minutes), and leave-one-out refits that say how well the other rows
// predict each one.
#include <cmath>
#include <limits>

#include "dataflow_sim/calibration.h"

namespace snapstream::dataflow_sim {
namespace {

// Worst |error| first; the sum of squares breaks ties, so a parameter no row constrains still
// settles and one that helps every row but the worst is still taken.
struct Score {
  double worst = std::numeric_limits<double>::infinity();
  double squares = std::numeric_limits<double>::infinity();
  bool better_than(const Score& o) const {
    if (worst < o.worst - 1e-12) return true;
    return worst <= o.worst + 1e-12 && squares < o.squares - 1e-15;
  }
};

size_t nearest(const std::vector<double>& grid, double value) {
  size_t best = 0;
  for (size_t i = 1; i < grid.size(); ++i)
    if (std::abs(grid[i] - value) < std::abs(grid[best] - value)) best = i;
  return best;
}

}  // namespace

FitResult Calibration::fit(std::optional<size_t> left_out) const {
  const auto& parameters = this->parameters();
  auto values_at = [&](const std::vector<size_t>& index) {
    std::vector<double> values(parameters.size());
    for (size_t i = 0; i < parameters.size(); ++i) values[i] = parameters[i].values[index[i]];
    return values;
  };
  auto score = [&](const std::vector<size_t>& index) {
    Score s{0, 0};
    const auto rows = evaluate(values_at(index));
    for (size_t r = 0; r < rows.size(); ++r) {
      if (!rows[r].fit || (left_out && *left_out == r)) continue;
      s.worst = std::max(s.worst, std::abs(rows[r].error));
      s.squares += rows[r].error * rows[r].error;
    }
    return s;
  };
  // From a start, move one parameter at a time to its best grid value until no move helps.
  auto descend = [&](std::vector<size_t> index) {
    Score best = score(index);
    for (bool moved = true; moved;) {
      moved = false;
      for (size_t p = 0; p < parameters.size(); ++p) {
        for (size_t v = 0; v < parameters[p].values.size(); ++v) {
          if (v == index[p]) continue;
          std::vector<size_t> trial = index;
          trial[p] = v;
          const Score s = score(trial);
          if (s.better_than(best)) {
            best = s;
            index = trial;
            moved = true;
          }
        }
      }
    }
    return std::make_pair(best, index);
  };
  std::vector<size_t> from_current, from_middle;
  const std::vector<double> current = current_values();
  for (size_t i = 0; i < parameters.size(); ++i) {
    from_current.push_back(nearest(parameters[i].values, current[i]));
    from_middle.push_back(parameters[i].values.size() / 2);
  }
  auto best = descend(from_current);
  const auto other = descend(from_middle);
  if (other.first.better_than(best.first)) best = other;
  return {values_at(best.second), best.first.worst};
}

void Calibration::leave_one_out(std::vector<CalibrationRowResult>& rows) const {
  for (size_t r = 0; r < rows.size(); ++r) {
    if (!rows[r].fit) continue;
    const FitResult without = fit(r);
    rows[r].leave_one_out_error = evaluate(without.values).at(r).error;
  }
}

}  // namespace snapstream::dataflow_sim
