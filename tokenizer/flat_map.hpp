// Open-addressing hash tables for the tokenizer's hot lookups (vocabulary, merges, word cache):
// one array of small slots and one buffer of key bytes, so a lookup touches one or two cache
// lines where std::unordered_map chases a node per probe (2-3x the encode speed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace convoy::tokenizer {

// string -> uint32_t. Keys are copied into one buffer (at most 4 GiB of key bytes in all).
class StringTable {
 public:
  void reserve(std::size_t n) { rehash(capacity_for(n)); }
  // Sets key's value (a second insert of the same key overwrites, as a Rust HashMap does).
  void insert(std::string_view key, std::uint32_t value) {
    if ((size_ + 1) * 2 > slots_.size()) rehash(capacity_for(size_ + 1));
    const std::uint64_t h = hash(key);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.len == kEmpty) {
        s = {static_cast<std::uint32_t>(h >> 32), static_cast<std::uint32_t>(keys_.size()),
             static_cast<std::uint32_t>(key.size()), value};
        keys_.append(key);
        ++size_;
        return;
      }
      if (matches(s, h, key)) {
        s.value = value;
        return;
      }
    }
  }
  // The value of key, or nullptr.
  const std::uint32_t* find(std::string_view key) const {
    if (size_ == 0) return nullptr;
    const std::uint64_t h = hash(key);
    for (std::size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.len == kEmpty) return nullptr;
      if (matches(s, h, key)) return &s.value;
    }
  }
  std::size_t size() const { return size_; }
  std::size_t key_bytes() const { return keys_.size(); }
  void clear() {
    slots_.assign(slots_.size(), Slot{});
    keys_.clear();
    size_ = 0;
  }
  // f(key, value) for every entry, in no particular order.
  template <typename F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_) {
      if (s.len != kEmpty) f(std::string_view(keys_).substr(s.offset, s.len), s.value);
    }
  }

 private:
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFF;
  struct Slot {
    std::uint32_t tag = 0;       // high 32 bits of the key's hash
    std::uint32_t offset = 0;    // key bytes at keys_[offset, offset + len)
    std::uint32_t len = kEmpty;  // kEmpty: a free slot
    std::uint32_t value = 0;
  };
  static std::uint64_t hash(std::string_view key) {
    return std::hash<std::string_view>{}(key)*0x9E3779B97F4A7C15ULL;
  }
  static std::size_t capacity_for(std::size_t n) {
    std::size_t c = 16;
    while (c < n * 2) c *= 2;
    return c;
  }
  bool matches(const Slot& s, std::uint64_t h, std::string_view key) const {
    return s.tag == static_cast<std::uint32_t>(h >> 32) && s.len == key.size() &&
           std::string_view(keys_).substr(s.offset, s.len) == key;
  }
  void rehash(std::size_t capacity) {
    if (capacity <= slots_.size()) return;
    std::vector<Slot> old(capacity);
    old.swap(slots_);
    mask_ = capacity - 1;
    for (const Slot& s : old) {
      if (s.len == kEmpty) continue;
      const std::uint64_t h = hash(std::string_view(keys_).substr(s.offset, s.len));
      std::size_t i = h & mask_;
      while (slots_[i].len != kEmpty) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  std::string keys_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
};

// (uint32_t, uint32_t) -> (uint32_t, uint32_t): the merges (pair of ids -> rank and new id).
class PairTable {
 public:
  struct Value {
    std::uint32_t rank;    // line of the merge in tokenizer.json (lower merges first)
    std::uint32_t new_id;  // id of the merged string
  };
  void reserve(std::size_t n) {
    std::size_t c = 16;
    while (c < n * 2) c *= 2;
    slots_.assign(c, Slot{});
    mask_ = c - 1;
    shift_ = 64;
    for (std::size_t k = c; k > 1; k /= 2) --shift_;
  }
  // Sets (a, b)'s value (overwrites). reserve() must have room for every insert.
  void insert(std::uint32_t a, std::uint32_t b, Value v) {
    const std::uint64_t key = join(a, b);
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == kEmpty || slots_[i].key == key) {
        slots_[i] = {key, v};
        return;
      }
    }
  }
  const Value* find(std::uint32_t a, std::uint32_t b) const {
    const std::uint64_t key = join(a, b);
    for (std::size_t i = slot_of(key);; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return &slots_[i].value;
      if (slots_[i].key == kEmpty) return nullptr;
    }
  }

 private:
  static constexpr std::uint64_t kEmpty = ~0ULL;  // (kNoId, kNoId): never a real pair
  struct Slot {
    std::uint64_t key = kEmpty;
    Value value{};
  };
  static std::uint64_t join(std::uint32_t a, std::uint32_t b) {
    return (static_cast<std::uint64_t>(a) << 32) | b;
  }
  std::size_t slot_of(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ULL) >> shift_);  // top bits
  }
  std::vector<Slot> slots_{16};
  std::size_t mask_ = 15;
  int shift_ = 60;  // 64 - log2(slots_.size())
};

}  // namespace convoy::tokenizer
