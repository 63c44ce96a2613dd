// Suggest the closest known name for a misspelt one ("did you mean ...?").
#pragma once
#include <string>
#include <vector>

namespace npusim {

// Returns "" when nothing is close enough to be a plausible typo.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

// " (did you mean 'x'?)" or "" — ready to append to an error message.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace npusim
