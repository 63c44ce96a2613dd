#include "common/did_you_mean.hpp"

#include <algorithm>
#include <cctype>

namespace npusim {
namespace {

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diag = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t up = row[j];
            const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                              std::tolower(static_cast<unsigned char>(b[j - 1]));
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
            diag = up;
        }
    }
    return row[b.size()];
}

}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
    std::string best;
    std::size_t best_d = std::string::npos;
    for (const auto& c : candidates) {
        const std::size_t d = edit_distance(word, c);
        if (d < best_d) {
            best_d = d;
            best = c;
        }
    }
    // Allow roughly one typo per three characters, at least two.
    const std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
    if (best_d <= limit) return best;
    // Else a candidate the word shares a long start with: one it runs on
    // past or stops short of ("warning", "pre" for "warn", "prefill"), or
    // half of it and four characters ("decoding" for "decode").
    best.clear();
    std::size_t best_common = 0;
    for (const auto& c : candidates) {
        std::size_t n = 0;
        while (n < word.size() && n < c.size() &&
               std::tolower(static_cast<unsigned char>(word[n])) == std::tolower(static_cast<unsigned char>(c[n])))
            ++n;
        const bool close = n == word.size() || n == c.size() || (n >= 4 && 2 * n >= c.size());
        if (n >= 3 && close && n > best_common) best = c, best_common = n;
    }
    return best;
}

std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
    const std::string m = closest_match(word, candidates);
    return m.empty() ? std::string() : " (did you mean '" + m + "'?)";
}

}  // namespace npusim
