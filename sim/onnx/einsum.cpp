#include "onnx/einsum.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

namespace npusim::onnx_import {

std::string parse_einsum(const std::string& eq, const std::vector<std::size_t>& ranks, EinsumTerms& t) {
    std::string s;
    for (const char ch : eq)
        if (ch != ' ') s += ch;
    const auto arrow = s.find("->");
    const std::string lhs = s.substr(0, arrow);
    std::size_t from = 0;
    for (std::size_t i = 0; i <= lhs.size(); ++i)
        if (i == lhs.size() || lhs[i] == ',') {
            t.in.push_back(lhs.substr(from, i - from));
            from = i + 1;
        }
    if (t.in.size() != ranks.size()) return "operand count";
    std::size_t ellipsis = 0;
    // The ellipsis' dims, last first: characters no equation holds (the
    // index letters are a-z and A-Z).
    std::string letters;
    for (char c = 1; c <= 16; ++c) letters += c;
    for (std::size_t k = 0; k < t.in.size(); ++k) {
        std::string& term = t.in[k];
        const auto at = term.find("...");
        if (at == std::string::npos) continue;
        const std::size_t explicit_n = term.size() - 3;
        if (ranks[k] < explicit_n) return "rank";
        const std::size_t n = ranks[k] - explicit_n;
        if (n > letters.size()) return "rank";
        ellipsis = std::max(ellipsis, n);
        std::string dims;
        for (std::size_t i = n; i-- > 0;) dims += letters[i];
        term = term.substr(0, at) + dims + term.substr(at + 3);
    }
    std::string all;
    for (const auto& term : t.in)
        for (const char ch : term)
            if (!std::isalpha(static_cast<unsigned char>(ch)) && letters.find(ch) == std::string::npos) return "index character";
    for (const auto& term : t.in) {
        if (std::set<char>(term.begin(), term.end()).size() != term.size()) return "a repeated index (diagonal)";
        all += term;
    }
    for (std::size_t k = 0; k < t.in.size(); ++k)
        if (t.in[k].size() != ranks[k]) return "rank";
    if (arrow != std::string::npos) {
        t.out = s.substr(arrow + 2);
        if (const auto at = t.out.find("..."); at != std::string::npos) {
            std::string dims;
            for (std::size_t i = ellipsis; i-- > 0;) dims += letters[i];
            t.out = t.out.substr(0, at) + dims + t.out.substr(at + 3);
        }
    } else {  // implicit: the letters that appear once, in order
        std::string once;
        for (std::size_t i = ellipsis; i-- > 0;) once += letters[i];
        std::set<char> sorted;
        for (const char ch : all)
            if (std::count(all.begin(), all.end(), ch) == 1 && letters.find(ch) == std::string::npos) sorted.insert(ch);  // ellipsis dims lead
        t.out = once + std::string(sorted.begin(), sorted.end());
    }
    for (const char ch : t.out)
        if (all.find(ch) == std::string::npos) return "an output index no operand has";
    return "";
}


bool einsum_output_shape(const EinsumTerms& t, const std::vector<std::vector<std::int64_t>>& shapes,
                         std::vector<std::int64_t>& out) {
    std::map<char, std::int64_t> size;
    for (std::size_t k = 0; k < t.in.size(); ++k)
        for (std::size_t i = 0; i < t.in[k].size(); ++i) {
            const std::int64_t d = shapes[k][i];
            auto [it, fresh] = size.emplace(t.in[k][i], d);
            if (fresh || it->second == d || d == 1) continue;
            if (it->second != 1) return false;
            it->second = d;
        }
    out.clear();
    for (const char ch : t.out) out.push_back(size.at(ch));
    return true;
}

}  // namespace npusim::onnx_import
