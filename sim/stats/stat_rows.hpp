// Builds rows of the statistics schema a docs section at a time
// (stats_keys*.cpp), so each row reads as one line of facts.
#pragma once
#include <string>
#include <vector>

#include "stats/stats_schema.hpp"

namespace npusim::stat_rows {

using K = StatKind;
using M = RankMerge;

// Rows of one docs table.
class Section {
public:
    Section(std::vector<StatSpec>& rows, std::string id) : rows_(rows), id_(std::move(id)) {}
    Section& key(std::string pattern, K kind, std::string unit, M merge, std::string meaning, std::string example = "") {
        rows_.push_back({std::move(pattern), kind, std::move(unit), merge, std::move(meaning), std::move(example), id_,
                         StatSource::key});
        return *this;
    }
    // A field inside a JSON value a writer set as a whole (set_json).
    Section& field(std::string pattern, K kind, std::string unit, std::string meaning) {
        rows_.push_back({std::move(pattern), kind, std::move(unit), M::whole, std::move(meaning), "", id_, StatSource::field});
        return *this;
    }
    // Added to the file after the run (--what-would-help).
    Section& after(std::string pattern, K kind, std::string unit, std::string meaning) {
        rows_.push_back({std::move(pattern), kind, std::move(unit), M::whole, std::move(meaning), "", id_, StatSource::after_run});
        return *this;
    }

private:
    std::vector<StatSpec>& rows_;
    std::string id_;
};

// The row lists of the other files, in docs order.
void host_keys(std::vector<StatSpec>& v);
void path_keys(std::vector<StatSpec>& v);
void system_keys(std::vector<StatSpec>& v);

}  // namespace npusim::stat_rows
