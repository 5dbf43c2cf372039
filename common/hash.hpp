// The few integer hashes convoy computes, one definition each. Every value is part of a
// contract (which worker a correlation id shards to, which turns a run cancels, what a dataset
// draws, which prefix blocks the mock caches), so none of them may change: tests/common/
// hash_test.cpp pins their outputs. Portable by construction: fixed-width integer arithmetic
// only, never std::hash (whose output differs between standard libraries).
#pragma once

#include <cstdint>
#include <string_view>

namespace convoy {

// splitmix64's increment (2^64 / golden ratio).
inline constexpr uint64_t kSplitmix64Gamma = 0x9e3779b97f4a7c15ULL;

// The 64-bit finalizer of splitmix64 (Stafford's "Mix13"): a bijection in which every input bit
// affects every output bit. Maps 0 to 0.
constexpr uint64_t splitmix64_finalize(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// One splitmix64 step from `x` without keeping state: the generator's next output when its
// state is x. A stateless mix for combining keys (unlike the finalizer, 0 does not map to 0).
constexpr uint64_t splitmix64(uint64_t x) { return splitmix64_finalize(x + kSplitmix64Gamma); }

// The splitmix64 generator: advances `state` and returns its next output. From state 0 the
// outputs are 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f, ... (the reference
// sequence).
constexpr uint64_t splitmix64_next(uint64_t& state) {
  state += kSplitmix64Gamma;
  return splitmix64_finalize(state);
}

// FNV-1a, 64-bit, over the bytes of `text`. `basis` is the standard offset basis unless a
// caller chains hashes (the mock's prefix blocks start from the parent block's hash).
inline constexpr uint64_t kFnv1a64Basis = 0xcbf29ce484222325ULL;
constexpr uint64_t fnv1a64(std::string_view text, uint64_t basis = kFnv1a64Basis) {
  uint64_t h = basis;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace convoy
