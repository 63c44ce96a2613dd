#include "onnx/constant_value.hpp"

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

namespace npusim::onnx_import {
namespace {

using TP = ::onnx::TensorProto;

template <typename T>
void from_raw(const std::string& raw, std::int64_t n, std::vector<double>& out) {
    out.resize(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
        T v;
        std::memcpy(&v, raw.data() + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
        out[static_cast<std::size_t>(i)] = static_cast<double>(v);
    }
}

double half_to_double(std::uint16_t h) {
    const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
    double v;
    if (exp == 0) v = std::ldexp(frac, -24);
    else if (exp == 31) v = frac ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else v = std::ldexp(frac + 1024, exp - 25);
    return sign ? -v : v;
}

double bf16_to_double(std::uint16_t b) {
    const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

std::size_t elem_size(int type) {
    switch (type) {
        case TP::DOUBLE:
        case TP::INT64:
        case TP::UINT64: return 8;
        case TP::FLOAT:
        case TP::INT32:
        case TP::UINT32: return 4;
        case TP::FLOAT16:
        case TP::BFLOAT16:
        case TP::INT16:
        case TP::UINT16: return 2;
        case TP::INT8:
        case TP::UINT8:
        case TP::BOOL: return 1;
        default: return 0;  // strings, complex: not folded
    }
}

bool decode_raw(int type, const std::string& raw, std::int64_t n, std::vector<double>& out) {
    if (raw.size() < static_cast<std::size_t>(n) * elem_size(type)) return false;
    switch (type) {
        case TP::DOUBLE: from_raw<double>(raw, n, out); return true;
        case TP::FLOAT: from_raw<float>(raw, n, out); return true;
        case TP::INT64: from_raw<std::int64_t>(raw, n, out); return true;
        case TP::UINT64: from_raw<std::uint64_t>(raw, n, out); return true;
        case TP::INT32: from_raw<std::int32_t>(raw, n, out); return true;
        case TP::UINT32: from_raw<std::uint32_t>(raw, n, out); return true;
        case TP::INT16: from_raw<std::int16_t>(raw, n, out); return true;
        case TP::UINT16: from_raw<std::uint16_t>(raw, n, out); return true;
        case TP::INT8: from_raw<std::int8_t>(raw, n, out); return true;
        case TP::UINT8:
        case TP::BOOL: from_raw<std::uint8_t>(raw, n, out); return true;
        case TP::FLOAT16:
        case TP::BFLOAT16: {
            out.resize(static_cast<std::size_t>(n));
            for (std::int64_t i = 0; i < n; ++i) {
                std::uint16_t h;
                std::memcpy(&h, raw.data() + 2 * i, 2);
                out[static_cast<std::size_t>(i)] = type == TP::FLOAT16 ? half_to_double(h) : bf16_to_double(h);
            }
            return true;
        }
        default: return false;
    }
}

std::string read_external(const TP& t, const std::string& dir) {
    std::string location;
    std::int64_t offset = 0, length = -1;
    for (const auto& e : t.external_data()) {
        try {
            if (e.key() == "location") location = e.value();
            else if (e.key() == "offset") offset = std::stoll(e.value());
            else if (e.key() == "length") length = std::stoll(e.value());
        } catch (const std::exception&) {
            return {};
        }
    }
    std::ifstream in(std::filesystem::path(dir) / location, std::ios::binary);
    if (!in || offset < 0) return {};
    in.seekg(offset);
    std::int64_t n = 1;
    for (const auto d : t.dims()) n *= d;
    const std::int64_t bytes = length >= 0 ? length : n * static_cast<std::int64_t>(elem_size(t.data_type()));
    std::string raw(static_cast<std::size_t>(std::max<std::int64_t>(bytes, 0)), '\0');
    in.read(raw.data(), static_cast<std::streamsize>(raw.size()));
    if (in.gcount() != static_cast<std::streamsize>(raw.size())) return {};
    return raw;
}

}  // namespace

std::int64_t saturating_int(double d) {
    if (!(d == d)) return 0;
    if (d >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
    if (d <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
    return static_cast<std::int64_t>(d);
}

std::int64_t ConstValue::elements() const {
    std::int64_t n = 1;
    for (const auto d : shape) n *= d;
    return n;
}

std::int64_t ConstValue::int_at(std::size_t i) const { return saturating_int(data.at(i)); }

std::vector<std::int64_t> ConstValue::ints() const {
    std::vector<std::int64_t> v;
    v.reserve(data.size());
    for (const double d : data) v.push_back(saturating_int(d));
    return v;
}

std::size_t element_bytes(int type) { return elem_size(type); }

ConstValue decode_tensor(const TP& t, const std::string& dir, std::int64_t max_elements) {
    ConstValue v;
    v.elem_type = t.data_type();
    std::int64_t n = 1;
    for (const auto d : t.dims()) {
        v.shape.push_back(d);
        if (d < 0 || (d > 0 && n > (std::int64_t(1) << 40) / d)) return v;  // absurd; shape only
        n *= d;
    }
    if (n > max_elements || elem_size(v.elem_type) == 0) return v;
    std::vector<double>& out = v.data;
    if (t.data_location() == TP::EXTERNAL) {
        v.has_data = decode_raw(v.elem_type, read_external(t, dir), n, out);
    } else if (t.has_raw_data()) {
        v.has_data = decode_raw(v.elem_type, t.raw_data(), n, out);
    } else {
        const auto take = [&](const auto& field, auto conv) {
            if (field.size() < n) return false;
            out.clear();
            for (std::int64_t i = 0; i < n; ++i) out.push_back(conv(field.Get(static_cast<int>(i))));
            return true;
        };
        const auto same = [](auto x) { return static_cast<double>(x); };
        switch (v.elem_type) {
            case TP::FLOAT: v.has_data = take(t.float_data(), same); break;
            case TP::DOUBLE: v.has_data = take(t.double_data(), same); break;
            case TP::INT64: v.has_data = take(t.int64_data(), same); break;
            case TP::UINT32:
            case TP::UINT64: v.has_data = take(t.uint64_data(), same); break;
            case TP::FLOAT16:
                v.has_data = take(t.int32_data(), [](std::int32_t x) { return half_to_double(static_cast<std::uint16_t>(x)); });
                break;
            case TP::BFLOAT16:
                v.has_data = take(t.int32_data(), [](std::int32_t x) { return bf16_to_double(static_cast<std::uint16_t>(x)); });
                break;
            default: v.has_data = take(t.int32_data(), same); break;
        }
    }
    if (!v.has_data) out.clear();
    return v;
}

TP encode_tensor(const std::string& name, const ConstValue& v) {
    TP t;
    t.set_name(name);
    for (const auto d : v.shape) t.add_dims(d);
    const bool is_float = v.elem_type == TP::FLOAT || v.elem_type == TP::DOUBLE || v.elem_type == TP::FLOAT16 ||
                          v.elem_type == TP::BFLOAT16;
    if (is_float) {
        t.set_data_type(TP::FLOAT);
        for (const double d : v.data) t.add_float_data(static_cast<float>(d));
    } else {
        t.set_data_type(v.elem_type == TP::BOOL || v.elem_type == TP::INT32 ? v.elem_type : TP::INT64);
        for (const double d : v.data) {
            if (t.data_type() == TP::INT64) t.add_int64_data(saturating_int(d));
            else t.add_int32_data(static_cast<std::int32_t>(saturating_int(d)));
        }
    }
    return t;
}

}  // namespace npusim::onnx_import
