// Grid files: explicit trial sets written by hand. The parser checks every value against what the
// ablation can use before any model runs, so a typo stops the job at submission with FILE:LINE
// rather than hours later on the cluster.
#include "abl/ablation/search.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string_view>

#include <fmt/format.h>

#include "abl/core/error.h"

namespace abl::ablation {

namespace {

constexpr size_t kNumParams = kParamNames.size();
constexpr size_t kScope = 0, kDirectionIndex = 1;
constexpr size_t kMaxWeight = 2, kMinWeight = 4;  // + 4·component
// Bounds of the values a grid may give: far beyond every sensible choice, but they stop typos
// (1e8 for 1e-8) and values that overflow into inf (1e308*last) before any model runs.
constexpr double kMaxAbsWeight = 10;
constexpr double kMaxDistanceLayers = 10;  // min_weight_distance <= 10·L

// Shorthands for both components: one axis that sets attn.X and mlp.X to the same value.
constexpr std::array<const char*, 4> kShorthands = {"max_weight", "max_weight_position", "min_weight",
                                                    "min_weight_distance"};

std::string_view trim(std::string_view s) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      parts.push_back(trim(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return parts;
}

std::string valid_names() {
  std::string s;
  for (const char* n : kParamNames) s += fmt::format("{}{}", s.empty() ? "" : ", ", n);
  s += " (shorthands for both components: ";
  for (size_t i = 0; i < kShorthands.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", kShorthands[i]);
  return s + ")";
}

// The kParamNames indices a name sets, empty when unknown.
std::vector<size_t> lookup(std::string_view name) {
  for (size_t i = 0; i < kNumParams; ++i) {
    if (name == kParamNames[i]) return {i};
  }
  for (size_t i = 0; i < kShorthands.size(); ++i) {
    if (name == kShorthands[i]) return {kMaxWeight + i, kMaxWeight + 4 + i};
  }
  return {};
}

struct Axis {
  std::string name;
  int line = 0;
  std::vector<size_t> params;
  std::vector<double> values;
};

class Parser {
 public:
  Parser(const std::string& file, int64_t num_layers)
      : file_(file), last_(static_cast<double>(num_layers - 1)) {}

  std::vector<TrialParams> parse(const std::string& text, const TrialParams& base) {
    std::istringstream in(text);
    std::string raw;
    std::array<int, kNumParams> set_on{};     // line that set each parameter (0: not named)
    std::array<size_t, kNumParams> set_by{};  // index of that axis
    while (std::getline(in, raw)) {
      ++line_;
      std::string_view s = raw;
      if (line_ == 1 && s.substr(0, 3) == "\xEF\xBB\xBF") s.remove_prefix(3);
      s = trim(s.substr(0, s.find('#')));
      if (s.empty()) continue;
      const size_t eq = s.find('=');
      if (eq == std::string_view::npos) error("expected 'name = values', got '{}'", s);
      Axis axis;
      axis.name = std::string(trim(s.substr(0, eq)));
      axis.line = line_;
      axis.params = lookup(axis.name);
      if (axis.params.empty()) error("unknown parameter '{}'; valid names: {}", axis.name, valid_names());
      for (size_t p : axis.params) {
        if (set_on[p] == 0) continue;
        const std::string& other = axes_[set_by[p]].name;
        if (other == axis.name) error("parameter '{}' repeated (first set on line {})", axis.name, set_on[p]);
        error("parameter '{}' repeated: '{}' on line {} already sets {}", axis.name, other, set_on[p],
              kParamNames[p]);
      }
      for (size_t p : axis.params) {
        set_on[p] = line_;
        set_by[p] = axes_.size();
      }
      const std::string_view values = trim(s.substr(eq + 1));
      if (values.empty()) error("no values for '{}'", axis.name);
      axis.values = axis.params[0] == kScope ? scopes(values) : numbers(values);
      for (double v : axis.values) check_domain(axis, v);
      axes_.push_back(std::move(axis));
    }
    if (axes_.empty()) {
      fail("{}: empty grid: no parameter lines (write e.g. 'direction_index = 0.5*last, 0.6*last')", file_);
    }

    int64_t total = 1;
    std::string sizes;
    for (const Axis& a : axes_) {
      total = std::min<int64_t>(total * static_cast<int64_t>(a.values.size()), kMaxGridTrials + 1);
      sizes += fmt::format("{}{} {}", sizes.empty() ? "" : " × ", a.values.size(), a.name);
    }
    ABL_CHECK(total <= kMaxGridTrials,
              "{}: the grid has more than {} trials ({}); split it into several files", file_, kMaxGridTrials,
              sizes);

    // Cartesian product as an odometer whose last digit turns fastest.
    std::vector<TrialParams> trials;
    trials.reserve(static_cast<size_t>(total));
    std::vector<size_t> digit(axes_.size(), 0);
    const std::array<double, kNumParams> base_values = param_values(base);
    for (int64_t t = 0; t < total; ++t) {
      std::array<double, kNumParams> v = base_values;
      for (size_t a = 0; a < axes_.size(); ++a) {
        for (size_t p : axes_[a].params) v[p] = axes_[a].values[digit[a]];
      }
      for (size_t c = 0; c < 2; ++c) {
        if (set_on[kMinWeight + 4 * c] == 0) v[kMinWeight + 4 * c] = v[kMaxWeight + 4 * c];
      }
      trials.push_back(params_from_values(v));
      for (size_t a = axes_.size(); a-- > 0;) {
        if (++digit[a] < axes_[a].values.size()) break;
        digit[a] = 0;
      }
    }
    return trials;
  }

 private:
  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> f, Args&&... args) const {
    fail("{}:{}: {}", file_, line_, fmt::format(f, std::forward<Args>(args)...));
  }

  std::vector<double> scopes(std::string_view values) const {
    std::vector<double> out;
    for (std::string_view w : split(values, ',')) {
      if (w == "global") {
        out.push_back(static_cast<double>(DirectionScope::global));
      } else if (w == "per_layer") {
        out.push_back(static_cast<double>(DirectionScope::per_layer));
      } else {
        error("unknown direction_scope '{}' (expected global or per_layer)", w);
      }
    }
    return out;
  }

  std::vector<double> numbers(std::string_view values) const {
    if (values.find(':') == std::string_view::npos) {
      std::vector<double> out;
      for (std::string_view item : split(values, ',')) out.push_back(number(item));
      return out;
    }
    const std::vector<std::string_view> parts = split(values, ':');
    if (parts.size() != 3) error("a range is written lo:hi:count, got '{}'", values);
    const double lo = number(parts[0]), hi = number(parts[1]);
    int64_t count = 0;
    const auto [end, ec] = std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), count);
    if (ec != std::errc() || end != parts[2].data() + parts[2].size() || parts[2].empty()) {
      error("bad count '{}' in range '{}' (expected a whole number)", parts[2], values);
    }
    if (count <= 0 || lo > hi) error("empty range '{}' (needs lo <= hi and count >= 1)", values);
    if (count > kMaxGridTrials) error("range '{}' has more than {} values", values, kMaxGridTrials);
    if (count == 1 && lo != hi)
      error("range '{}' has 1 value but different ends; write lo:lo:1 or lo", values);
    std::vector<double> out(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) {
      // The ends exactly, so that an end outside its domain is what the error names.
      out[static_cast<size_t>(i)] =
          i == 0 ? lo
                 : i == count - 1 ? hi : lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(count - 1);
    }
    return out;
  }

  // A plain number, `last`, `X*last` or `last*X`.
  double number(std::string_view item) const {
    std::string_view s = item;
    double factor = 1.0;
    bool relative = false;
    if (s.size() >= 4 && s.substr(s.size() - 4) == "last") {
      relative = true;
      s = trim(s.substr(0, s.size() - 4));
      if (!s.empty()) {
        if (s.back() != '*') error("bad number '{}' (write e.g. 0.6*last)", item);
        s = trim(s.substr(0, s.size() - 1));
      }
    } else if (s.substr(0, 4) == "last") {
      relative = true;
      s = trim(s.substr(4));
      if (s.empty() || s.front() != '*') error("bad number '{}' (write e.g. 0.6*last)", item);
      s = trim(s.substr(1));
      if (s.empty()) error("bad number '{}' (write e.g. 0.6*last)", item);
    }
    if (!relative || !s.empty()) factor = plain(s, item);
    return relative ? factor * last_ : factor;
  }

  double plain(std::string_view s, std::string_view item) const {
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    double x = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size() || !std::isfinite(x)) {
      error("bad number '{}'", item);
    }
    return x;
  }

  // Every value must be finite and inside the range the ablation can use: the model's depths and
  // layers for indices and positions, |λ| <= kMaxAbsWeight, 0 < min_weight_distance <= 10·L.
  void check_domain(const Axis& axis, double v) const {
    for (size_t p : axis.params) {
      if (p == kScope) continue;
      const char* name = kParamNames[p];
      if (p == kDirectionIndex) {
        if (!(v >= 0 && v <= last_)) {
          error("direction_index {} is outside [0, {}] (the model has {} layers; last = {})", v, last_,
                last_ + 1, last_);
        }
        continue;
      }
      switch ((p - kMaxWeight) % 4) {
        case 0:    // max_weight
        case 2: {  // min_weight
          if (!(std::fabs(v) <= kMaxAbsWeight)) {
            error("{} {} is outside [{}, {}] (the ablation weight λ; 0 switches a component off)", name, v,
                  -kMaxAbsWeight, kMaxAbsWeight);
          }
          break;
        }
        case 1: {  // max_weight_position
          if (!(v >= 0 && v <= last_)) {
            error("{} {} is outside [0, {}] (a layer of the model; last = {})", name, v, last_, last_);
          }
          break;
        }
        default: {  // min_weight_distance
          const double max_distance = kMaxDistanceLayers * (last_ + 1);
          if (std::isfinite(v) && v <= 0) {
            error("{} must be > 0, got {} (set max_weight = 0 to switch a component off)", name, v);
          }
          if (!(v > 0 && v <= max_distance)) {
            error("{} {} is outside (0, {}] ({} times the model's {} layers)", name, v, max_distance,
                  kMaxDistanceLayers, last_ + 1);
          }
          break;
        }
      }
    }
  }

  std::string file_;
  double last_;
  int line_ = 0;
  std::vector<Axis> axes_;
};

}  // namespace

TrialParams default_grid_params(int64_t num_layers) {
  ABL_CHECK(num_layers >= 1, "a grid needs a model with at least one layer, got {}", num_layers);
  const double last = static_cast<double>(num_layers - 1);
  TrialParams p;
  p.scope = DirectionScope::global;
  p.direction_index = std::round(0.6 * last);
  for (ComponentParams& c : p.comp) {
    c.max_weight = 1.0;
    c.min_weight = 1.0;
    c.max_weight_position = 0.0;
    c.min_weight_distance = std::max(last, 1.0);
  }
  return p;
}

std::vector<TrialParams> parse_grid_text(const std::string& text, const std::string& name,
                                         int64_t num_layers) {
  const TrialParams base = default_grid_params(num_layers);
  return Parser(name, num_layers).parse(text, base);
}

std::vector<TrialParams> parse_grid_file(const std::string& path, int64_t num_layers) {
  std::ifstream in(path, std::ios::binary);
  ABL_CHECK(in.good(), "cannot read grid file {}", path);
  std::ostringstream text;
  text << in.rdbuf();
  ABL_CHECK(!in.bad(), "error reading grid file {}", path);
  return parse_grid_text(text.str(), path, num_layers);
}

}  // namespace abl::ablation
