#include "controller/config/distribution_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <cmath>

#include "controller/config/config_keys.hpp"

namespace convoy::config_detail {

namespace {

using yaml_util::format_number;
using yaml_util::Section;

std::string dist_num(double v) { return format_number(v); }

const char* const kExpectedDistribution =
    "expected a number, {mean, stddev, min, max} or {mix: [{weight, mean, stddev}, ...]}, got ";

// min (defaulting to `floor`), max, stddev >= 0 and the mean inside [min, max], each error naming
// `where` (the distribution's or the component's key).
void check_clamp(const Section& parent, std::string_view where, const Section& m, double& mean,
                 double& stddev, std::optional<double>& min, std::optional<double>& max,
                 double floor) {
  m.read("mean", mean);
  m.read("stddev", stddev);
  m.read("min", min);
  if (!min) min = floor;
  m.read("max", max);
  m.check(stddev >= 0, "stddev", "must be at least 0, got " + dist_num(stddev));
  m.check(*min >= floor, "min", "must be at least " + dist_num(floor) + ", got " + dist_num(*min));
  if (max) {
    m.check(*max >= floor, "max",
            "must be at least " + dist_num(floor) + ", got " + dist_num(*max));
    parent.check(*min <= *max, where,
                 "min " + dist_num(*min) + " is greater than max " + dist_num(*max));
  }
  const bool inside = mean >= *min && (!max || mean <= *max);
  parent.check(inside, where,
               "mean " + dist_num(mean) + " is outside [" + dist_num(*min) + ", " +
                   (max ? dist_num(*max) : std::string("unbounded")) + "]");
}

// The mixture's own mean and stddev (law of total variance), for reports and bounds.
void summarise_mix(Distribution& d) {
  double total = 0;
  for (const auto& c : d.mix) total += c.weight;
  double mean = 0;
  double second = 0;
  for (const auto& c : d.mix) {
    const double p = c.weight / total;
    mean += p * c.mean;
    second += p * (c.stddev * c.stddev + c.mean * c.mean);
  }
  d.mean = mean;
  d.stddev = std::sqrt(std::max(second - mean * mean, 0.0));
}

// dist.mix: a non-empty list of components with weights >= 0 summing to > 0; nothing else beside.
void read_mix(const Section& m, Distribution& d, double floor) {
  for (const char* other : {"mean", "stddev", "min", "max"}) {
    m.check(!m.present(other), other,
            "a mix gives each component its own mean, stddev, min and max: remove this key or "
            "the mix");
  }
  const YAML::Node list = m.node("mix");
  const std::string path = m.path("mix");
  if (!list.IsSequence() || list.size() == 0) {
    m.source().fail(path, "expected a non-empty list of {weight, mean, stddev, min, max}, got " +
                              yaml_util::describe(list));
  }
  std::vector<MixComponent> mix;
  double total = 0;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string item = "mix[" + std::to_string(i) + "]";
    const Section c(m.source(), list[i], m.path(item), config_keys::kMixComponentKeys);
    MixComponent component;
    c.check(c.present("weight"), "weight", "each component needs a weight (relative, >= 0)");
    c.read("weight", component.weight);
    c.check(component.weight >= 0, "weight",
            "must be at least 0, got " + dist_num(component.weight));
    check_clamp(m, item, c, component.mean, component.stddev, component.min, component.max, floor);
    total += component.weight;
    mix.push_back(component);
  }
  m.check(total > 0, "mix", "the weights must sum to a positive number, got " + dist_num(total));
  d = Distribution{0, 0, floor, std::nullopt};
  d.mix = std::move(mix);
  summarise_mix(d);
}

std::string opt_dist_num(const std::optional<double>& v) {
  return v ? format_number(*v) : std::string("null");
}

}  // namespace

void read_distribution(const Section& s, std::string_view key, Distribution& d, double floor) {
  const YAML::Node n = s.node(key);
  if (!n.IsDefined()) return;
  const std::string path = s.path(key);
  if (n.IsScalar()) {
    auto v = yaml_util::parse_number(n.Scalar());
    if (!v) s.source().fail(path, kExpectedDistribution + yaml_util::describe(n));
    d = Distribution{*v, 0, *v, *v};
    s.check(*v >= floor, key, "must be at least " + dist_num(floor) + ", got " + dist_num(*v));
    return;
  }
  if (!n.IsMap()) s.source().fail(path, kExpectedDistribution + yaml_util::describe(n));
  const Section m(s.source(), n, path, config_keys::kDistributionKeys);
  if (m.present("mix")) return read_mix(m, d, floor);
  d.mix.clear();
  check_clamp(s, key, m, d.mean, d.stddev, d.min, d.max, floor);
}

std::string distribution_yaml(const Distribution& d) {
  auto fields = [](double mean, double stddev, const std::optional<double>& min,
                   const std::optional<double>& max) {
    return "mean: " + format_number(mean) + ", stddev: " + format_number(stddev) +
           ", min: " + opt_dist_num(min) + ", max: " + opt_dist_num(max);
  };
  if (d.mix.empty()) return "{" + fields(d.mean, d.stddev, d.min, d.max) + "}";
  std::string out = "{mix: [";
  for (std::size_t i = 0; i < d.mix.size(); ++i) {
    const MixComponent& c = d.mix[i];
    out += (i ? ", " : "") + std::string("{weight: ") + format_number(c.weight) + ", " +
           fields(c.mean, c.stddev, c.min, c.max) + "}";
  }
  return out + "]}";
}

}  // namespace convoy::config_detail
