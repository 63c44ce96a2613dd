#include "hw/bandwidth_share.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace npusim {
namespace {
// A flow this close to its finish counts as done: absorbs the rounding of
// finish times to whole picoseconds.
bool is_done(double finish_v, double virtual_v) {
    return finish_v - virtual_v <= 1e-9 + 1e-12 * finish_v;
}
}  // namespace

BandwidthShare::BandwidthShare(double capacity_bytes_per_ps) : capacity_(capacity_bytes_per_ps) {}

BandwidthShare::CapClass& BandwidthShare::class_for(double cap) {
    auto it = std::lower_bound(classes_.begin(), classes_.end(), cap,
                               [](const CapClass& c, double v) { return c.cap < v; });
    if (it == classes_.end() || it->cap != cap) {
        CapClass c;
        if (!spare_.empty()) {
            c = std::move(spare_.back());
            spare_.pop_back();
        }
        c.cap = cap;
        c.rate = 0;
        c.virtual_v = 0;
        it = classes_.insert(it, std::move(c));
    }
    return *it;
}

void BandwidthShare::advance(std::uint64_t now_ps) {
    if (now_ps <= last_ps_) return;
    if (dirty_) rebalance();
    const double dt = static_cast<double>(now_ps - last_ps_);
    for (auto& c : classes_)
        if (!c.flows.empty()) c.virtual_v += c.rate * dt;
    if (saturated_) saturated_ps_ += now_ps - last_ps_;
    last_ps_ = now_ps;
}

void BandwidthShare::rebalance() {
    // Water-filling over cap classes in ascending cap order.
    double remaining_capacity = capacity_;
    std::size_t remaining_flows = active_;
    saturated_ = false;
    for (auto& c : classes_) {
        const std::size_t n = c.flows.size();
        if (n == 0) continue;
        const double fair = remaining_capacity / static_cast<double>(remaining_flows);
        c.rate = std::min(c.cap, fair);
        saturated_ = saturated_ || fair < c.cap;
        remaining_capacity -= c.rate * static_cast<double>(n);
        remaining_flows -= n;
    }
    next_finish_ = compute_next_finish();
    dirty_ = false;
}

void BandwidthShare::add(std::uint64_t now_ps, double bytes, double cap, std::uint64_t token) {
    advance(now_ps);
    CapClass& c = class_for(cap);
    c.flows.emplace(c.virtual_v + bytes, seq_++, token);
    ++active_;
    dirty_ = true;
}

void BandwidthShare::set_capacity(std::uint64_t now_ps, double cap) {
    if (cap == capacity_) return;
    advance(now_ps);
    capacity_ = cap;
    dirty_ = true;
}

std::uint64_t BandwidthShare::compute_next_finish() const {
    std::uint64_t best = std::numeric_limits<std::uint64_t>::max();
    for (const auto& c : classes_) {
        if (c.flows.empty() || c.rate <= 0) continue;
        const double left = std::max(0.0, c.flows.top().finish_v - c.virtual_v);
        const double dt = std::ceil(left / c.rate - 1e-9);
        best = std::min(best, last_ps_ + static_cast<std::uint64_t>(std::max(0.0, dt)));
    }
    return best;
}

void BandwidthShare::pop_finished(std::uint64_t now_ps, std::vector<std::uint64_t>& tokens) {
    advance(now_ps);
    std::vector<std::pair<std::uint64_t, std::uint64_t>>& done = done_;  // (seq, token)
    done.clear();
    tokens.clear();
    bool emptied = false;
    for (auto& c : classes_) {
        while (!c.flows.empty() && is_done(c.flows.top().finish_v, c.virtual_v)) {
            done.emplace_back(c.flows.top().seq, c.flows.top().token);
            c.flows.pop();
            --active_;
        }
        emptied = emptied || c.flows.empty();
    }
    if (emptied) {  // empty classes leave, the others keep their order
        std::size_t kept = 0;
        for (std::size_t i = 0; i < classes_.size(); ++i) {
            if (classes_[i].flows.empty()) {
                spare_.push_back(std::move(classes_[i]));
                continue;
            }
            if (kept != i) classes_[kept] = std::move(classes_[i]);
            ++kept;
        }
        classes_.resize(kept);
    }
    if (done.empty()) return;
    dirty_ = true;
    if (done.size() > 1) std::sort(done.begin(), done.end());  // start order
    for (const auto& d : done) tokens.push_back(d.second);
}

double BandwidthShare::current_rate() {
    if (dirty_) rebalance();
    double r = 0;
    for (const auto& c : classes_) r += c.rate * static_cast<double>(c.flows.size());
    return r;
}

}  // namespace npusim
