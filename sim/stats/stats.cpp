#include "stats/stats.hpp"

#include <stdexcept>

#include <nlohmann/json.hpp>

#include "stats/stats_schema.hpp"

namespace npusim {

const std::string& Stats::checked(const std::string& key) {
    stat_spec(key);
    return key;
}

double Stats::number(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end()) throw std::logic_error("stats: no key '" + key + "' (number_or reads a key a run may lack)");
    if (auto i = std::get_if<std::int64_t>(&it->second)) return static_cast<double>(*i);
    if (auto d = std::get_if<double>(&it->second)) return *d;
    throw std::logic_error("stats: '" + key + "' is text, not a number");
}

double Stats::number_or(const std::string& key, double fallback) const {
    return has(key) ? number(key) : fallback;
}

std::string Stats::to_json(int indent) const {
    nlohmann::json root = nlohmann::json::object();
    auto slot = [&root](const std::string& key) -> nlohmann::json& {
        return root[nlohmann::json::json_pointer("/" + [&] {
            std::string p;
            for (char c : key) p += (c == '.') ? '/' : c;
            return p;
        }())];
    };
    for (const auto& [key, v] : values_)
        std::visit([&, &key = key](const auto& x) { slot(key) = x; }, v);
    for (const auto& [key, text] : raw_) slot(key) = nlohmann::json::parse(text);
    return root.dump(indent) + "\n";
}

}  // namespace npusim
