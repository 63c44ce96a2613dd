// The responses of a study with "expect" (study.hpp): how each change moved
// a metric against its base point, judged by a rule, and compared with the
// misses the study records as known. Written to DIR/responses.jsonl.
//
// roofline: r = metric(changed) / metric(base) must have the sign "more of a
//   resource is never slower" gives (within the tolerance) and lie in the band
//   the base run's roofline allows: a resource that grows by f can at most
//   shrink the time it is busy by 1/f, one that shrinks can at most stretch
//   it by 1/f and (a fixed stream's work being conserved) must at least hold
//   its busy time; where the base run shows the resource bound enough that a
//   move of 10% is due, no effect is a miss too. A clock change compares
//   total_ns (a faster clock buys time; HBM and L2 are in ns).
// monotone: each change's values, as written, grow a resource: no step from
//   one value to the next may be slower by more than the tolerance.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/points.hpp"
#include "study/study.hpp"

namespace npusim::study {

// Whether the roofline rule knows what "more" means for a chip key, and the
// keys it knows (for the error of a study that changes another).
bool roofline_rule_known(const std::string& path);
std::vector<std::string> roofline_rule_keys();

struct ResponseCheck {
    std::vector<nlohmann::json> rows;   // one per response, in point order
    std::vector<std::string> problems;  // a miss the study does not record, or a recorded one that passed
    std::size_t misses = 0;
};

// `stats[i]`: point i's statistics (null when it failed or did not run).
ResponseCheck judge_responses(const Study& s, const std::vector<Point>& points,
                              const std::vector<nlohmann::json>& stats);

}  // namespace npusim::study
