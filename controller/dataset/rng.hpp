// Seeded randomness for datasets. Every draw derives from (seed, item index, stream) only, so
// conversation i is the same whether it is generated alone, in a full list, or on any host.
// Portable by construction: splitmix64 + xoshiro256** and our own normal transform, never
// std::*_distribution (whose output differs between standard libraries).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

#include "common/hash.hpp"
#include "controller/config/config.hpp"

namespace convoy::controller {

// Independent purposes get independent streams, so adding a draw to one never shifts another.
enum class Stream : uint64_t {
  kShape = 1,          // turn counts, token counts, think times
  kText = 2,           // corpus offsets for user text and replies
  kSystemPrompt = 3,   // the shared system prompt (index unused)
  kCorrelationId = 4,  // uuid4 correlation ids
  kBlock = 5,          // mooncake hash-id blocks (index = hash id)
  kReply = 6,          // recorded assistant replies the dataset did not give
  kSubagentId = 7,     // sub-agent correlation ids (index = lead, turn = position)
  kSubagents = 8,      // dataset.subagents: whether a lead spawns, how many, their shapes
  kSubagentText = 9,   // a sub-agent's draws of its own (index = lead, turn = position)
  kPrefixPool = 10,    // dataset.prefixes: prefix j's corpus offset (index = j)
  kPrefixPick = 11,    // dataset.prefixes: which prefixes conversation `index` holds
  kRequestHints = 20,  // dataset.tenants and dataset.agent_hints of conversation `index`
};

// A 64-bit seed for one (seed, index, stream) triple; distinct triples give unrelated seeds.
inline uint64_t derive_seed(uint64_t seed, uint64_t index, Stream stream) {
  uint64_t state = seed;
  uint64_t a = splitmix64_next(state);
  state = a ^ index;
  uint64_t b = splitmix64_next(state);
  state = b ^ (static_cast<uint64_t>(stream) * 0xD1B54A32D192ED03ull);
  return splitmix64_next(state);
}

// xoshiro256**: small, fast, well distributed; seeded through splitmix64 as its authors advise.
class Rng {
 public:
  explicit Rng(uint64_t seed) {
    for (auto& word : s_) word = splitmix64_next(seed);
  }
  Rng(uint64_t seed, uint64_t index, Stream stream) : Rng(derive_seed(seed, index, stream)) {}
  // One turn's own generator: independent of how many draws other turns made.
  Rng(uint64_t seed, uint64_t index, uint64_t turn, Stream stream)
      : Rng(derive_seed(derive_seed(seed, index, stream), turn, stream)) {}

  uint64_t next_u64() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform in [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

  // Uniform in [0, n); n > 0. Plain modulo: the bias is below n / 2^64, irrelevant for corpus
  // offsets.
  uint64_t below(uint64_t n) { return next_u64() % n; }

  // Normal(mean, stddev) by Box-Muller (one value per call, so the stream position per draw is
  // fixed: two uniforms).
  double normal(double mean, double stddev) {
    const double u1 = 1.0 - uniform01();  // (0, 1]: log is finite
    const double u2 = uniform01();
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
    return mean + stddev * z;
  }

 private:
  static constexpr double kPi = 3.14159265358979323846;
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4] = {};
};

// A mixture's component for one draw, picked by weight with one uniform draw, as a plain
// distribution whose min is also at least the mixture's own min (a floor raised for exact tokens).
// `d.mix` is non-empty with weights summing to > 0 (the config loader's rule).
inline Distribution pick_component(const Distribution& d, Rng& rng) {
  double total = 0;
  for (const auto& c : d.mix) total += c.weight;
  double x = rng.uniform01() * total;
  const MixComponent* chosen = &d.mix.back();
  for (const auto& c : d.mix) {
    if (c.weight > 0 && x < c.weight) {
      chosen = &c;
      break;
    }
    x -= c.weight;
  }
  // Rounding can leave x just past the last weight: the last component with weight takes it.
  if (chosen->weight <= 0) {
    for (const auto& c : d.mix) {
      if (c.weight > 0) chosen = &c;
    }
  }
  std::optional<double> lo = chosen->min;
  if (d.min) lo = std::max(lo.value_or(*d.min), *d.min);
  return Distribution{chosen->mean, chosen->stddev, lo, chosen->max};
}

// A real draw from `d`: Normal(mean, stddev) clamped to [max(d.min, floor), d.max]; a mixture
// picks a component first (one more uniform draw), then draws from it.
// stddev <= 0 gives the (clamped) mean without consuming randomness.
inline double draw_real(const Distribution& d, Rng& rng, double floor) {
  if (!d.mix.empty()) return draw_real(pick_component(d, rng), rng, floor);
  double v = d.stddev > 0 ? rng.normal(d.mean, d.stddev) : d.mean;
  const double lo = std::max(d.min.value_or(floor), floor);
  v = std::max(v, lo);
  if (d.max && *d.max >= lo) v = std::min(v, *d.max);
  return v;
}

// An integer draw: the real draw rounded to nearest, then clamped to the integers inside
// [max(d.min, floor), d.max] (so a clamp never leaves the range by rounding); a mixture as in
// draw_real.
inline int64_t draw_integer(const Distribution& d, Rng& rng, int64_t floor) {
  if (!d.mix.empty()) return draw_integer(pick_component(d, rng), rng, floor);
  const double lo_real =
      std::max(d.min.value_or(static_cast<double>(floor)), static_cast<double>(floor));
  const auto lo = static_cast<int64_t>(std::ceil(lo_real));
  std::optional<int64_t> hi;
  if (d.max) hi = std::max(lo, static_cast<int64_t>(std::floor(*d.max)));
  const double v = d.stddev > 0 ? rng.normal(d.mean, d.stddev) : d.mean;
  // Clamp in the real domain first so huge tails cannot overflow the conversion.
  const double hi_real = hi ? static_cast<double>(*hi) : 9.0e15;
  const auto rounded =
      static_cast<int64_t>(std::llround(std::clamp(v, static_cast<double>(lo), hi_real)));
  return hi ? std::clamp(rounded, lo, *hi) : std::max(rounded, lo);
}

}  // namespace convoy::controller
