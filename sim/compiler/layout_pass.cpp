#include "compiler/layout_pass.hpp"

#include <map>

#include <fmt/format.h>

#include "common/errors.hpp"
#include "compiler/attention_layout.hpp"
#include "compiler/graph_edit.hpp"
#include "compiler/op_traits.hpp"

namespace npusim::compiler {
namespace {

class LayoutAssigner {
public:
    LayoutAssigner(Graph& g, bool hoist, CubeConversions cube) : g_(g), hoist_(hoist), cube_(cube) {}

    int convert(int t, Layout to, const std::string& consumer) {
        if (hoist_) {
            if (auto it = cache_.find({t, to}); it != cache_.end()) return it->second;
            // Converting back what was just converted: use the original.
            if (auto src = source_.find(t); src != source_.end() && tensor(src->second).layout == to) return src->second;
            if (int hoisted = try_hoist(t, to); hoisted >= 0) return hoisted;
        }
        Tensor out = tensor(t);
        out.name = fmt::format("{}@{}", tensor(t).name, to_string(to));
        if (!hoist_) out.name += "/" + consumer;
        out.layout = to;
        out.is_input = out.is_const = out.is_output = false;
        out.producer = -1;
        out.consumers.clear();
        const int nt = add_tensor(g_, std::move(out));
        Node conv;
        conv.name = fmt::format("trans_{}_{}", tensor(t).name, to_string(to));
        if (!hoist_) conv.name += "/" + consumer;
        conv.op = OpType::FormatConvert;
        conv.inputs = {t};
        conv.outputs = {nt};
        g_.nodes.push_back(std::move(conv));
        ++inserted_;
        source_[nt] = t;
        if (hoist_) cache_[{t, to}] = nt;
        notes_.push_back(fmt::format("FormatConvert {} {} -> {} ({} B)", tensor(t).name, to_string(tensor(t).layout),
                                     to_string(to), tensor(t).bytes()));
        return nt;
    }

    // The element-wise producer of t runs in the target layout instead, if t
    // feeds only this consumer: its own inputs are converted (and so on up).
    int try_hoist(int t, Layout to) {
        const Tensor& tt = tensor(t);
        if (tt.producer < 0 || tt.consumers.size() != 1 || tt.is_output) return -1;
        Node& p = g_.nodes[static_cast<std::size_t>(tt.producer)];
        if (!is_elementwise(p.op)) return -1;
        for (int in : p.inputs) {
            const Tensor& it = tensor(in);
            if (it.is_const) continue;
            if (it.shape != tt.shape || it.layout != tt.layout) return -1;
        }
        const std::string pname = p.name;
        const int producer = tt.producer;
        for (std::size_t i = 0; i < g_.nodes[static_cast<std::size_t>(producer)].inputs.size(); ++i) {
            const int in = g_.nodes[static_cast<std::size_t>(producer)].inputs[i];
            if (tensor(in).is_const) continue;
            const int c = convert(in, to, pname);
            g_.nodes[static_cast<std::size_t>(producer)].inputs[i] = c;
        }
        g_.tensors[static_cast<std::size_t>(t)].layout = to;
        ++hoisted_;
        notes_.push_back(fmt::format("hoisted a conversion to {} above {}", to_string(to), pname));
        cache_[{t, to}] = t;
        return t;
    }

    void run(Layout input_layout) {
        for (auto& t : g_.tensors) {
            if (t.is_input) t.layout = (t.shape.size() == 4 && input_layout == Layout::NC1HWC0) ? Layout::NC1HWC0
                                                                                                  : plain_layout(t.shape);
        }
        const std::size_t original = g_.nodes.size();
        for (std::size_t i = 0; i < original; ++i) {
            need_plain_cube(g_.nodes[i]);
            if (hoist_) align_operands(i);
            for (std::size_t k = 0; k < g_.nodes[i].inputs.size(); ++k) {
                const auto need = required_layout(g_, g_.nodes[i], k, cube_);
                const int in = g_.nodes[i].inputs[k];
                if (need && tensor(in).layout != *need) {
                    const int c = convert(in, *need, g_.nodes[i].name);
                    g_.nodes[i].inputs[k] = c;
                }
            }
            const Layout l = output_layout(g_, g_.nodes[i], cube_);
            for (int o : g_.nodes[i].outputs) g_.tensors[static_cast<std::size_t>(o)].layout = l;
            // Keep consumer lists current for hoisting decisions.
        }
        // Frameworks read results back in plain layouts.
        for (int& o : g_.outputs) {
            if (is_plain(tensor(o).layout)) continue;
            g_.tensors[static_cast<std::size_t>(o)].is_output = false;
            o = convert(o, plain_layout(tensor(o).shape), "output");
            g_.tensors[static_cast<std::size_t>(o)].is_output = true;
        }
        relink(g_);
        notes_.push_back(fmt::format("layout: {} FormatConvert node(s) inserted, {} hoisted", inserted_, hoisted_));
    }

    // A BSND attention reads a head's rows strided in its plain operands and
    // writes its output so: a Cube that loads and stores only fractal
    // matrices cannot.
    void need_plain_cube(const Node& n) const {
        if (n.op != OpType::Attention || !seq_major(n)) return;
        if (!cube_.nd2nz_on_load || !cube_.nz2nd_on_store)
            throw InputError(
                fmt::format("{}: node '{}': attrs.layout: BSND needs a Cube that loads and stores plain tensors "
                            "(chip.cores.cube.mte2_nd2nz and fixpipe_nz2nd are false on this chip); give q, k "
                            "and v as [..., heads, S, D] (BNSD)",
                            g_.file, n.name));
        for (const int in : n.inputs)  // constants keep the layout they were declared in
            if (tensor(in).is_const && !is_plain(tensor(in).layout))
                throw InputError(fmt::format("{}: node '{}': attrs.layout: BSND reads its inputs plain, but '{}' is {}",
                                             g_.file, n.name, tensor(in).name, to_string(tensor(in).layout)));
    }

    // Operands of a Concat / Add / Mul that must share a layout: convert
    // toward the fractal one (what the Cube consumer will want anyway)
    // rather than out of it and back.
    void align_operands(std::size_t i) {
        const OpType op = g_.nodes[i].op;
        if (op != OpType::Concat && op != OpType::Add && op != OpType::Mul && op != OpType::Sub && op != OpType::Div &&
            op != OpType::Max && op != OpType::Min && op != OpType::Pow && op != OpType::Where)
            return;
        const auto& ins = g_.nodes[i].inputs;
        const Tensor& first = tensor(ins[0]);
        bool any_fractal = false;
        for (int in : ins)
            any_fractal = any_fractal || (!tensor(in).is_const && tensor(in).shape.size() == first.shape.size() &&
                                          tensor(in).layout == Layout::NC1HWC0);
        if (!any_fractal || first.shape.size() != 4) return;
        for (std::size_t k = 0; k < g_.nodes[i].inputs.size(); ++k) {
            const int in = g_.nodes[i].inputs[k];
            if (tensor(in).is_const || tensor(in).shape.size() != 4 || tensor(in).layout == Layout::NC1HWC0) continue;
            const int c = convert(in, Layout::NC1HWC0, g_.nodes[i].name);
            g_.nodes[i].inputs[k] = c;
        }
    }

    std::vector<std::string> notes_;

private:
    const Tensor& tensor(int t) const { return g_.tensors[static_cast<std::size_t>(t)]; }

    Graph& g_;
    bool hoist_;
    CubeConversions cube_;
    std::map<std::pair<int, Layout>, int> cache_;
    std::map<int, int> source_;  // converted tensor -> what it was converted from
    int inserted_ = 0;
    int hoisted_ = 0;
};

}  // namespace

std::vector<std::string> assign_layouts(Graph& g, Layout input_layout, bool hoist, CubeConversions cube) {
    LayoutAssigner a(g, hoist, cube);
    a.run(input_layout);
    return a.notes_;
}

}  // namespace npusim::compiler
