// Salvaging an Assign that does not decode as a whole. A bounds-checked walk over the msgpack
// bytes (it never allocates and applies no decode limits) finds where each conversation starts
// and ends; each is then decoded on its own, with the usual limits. What still fails is
// reported by index when the index can be read, else by position in the batch.
#include <limits>
#include <string_view>

#include "proto/envelope.hpp"

namespace convoy::proto {

namespace {

class Reader {
 public:
  Reader(const void* data, size_t size) : p_(static_cast<const uint8_t*>(data)), size_(size) {}

  size_t offset() const { return off_; }

  std::optional<uint64_t> map_header() {
    if (!need(1)) return std::nullopt;
    const uint8_t tag = p_[off_];
    if (tag >= 0x80 && tag <= 0x8f) return advance(1, tag & 0x0fu);
    if (tag == 0xde) return sized(2);
    if (tag == 0xdf) return sized(4);
    return std::nullopt;
  }

  std::optional<uint64_t> array_header() {
    if (!need(1)) return std::nullopt;
    const uint8_t tag = p_[off_];
    if (tag >= 0x90 && tag <= 0x9f) return advance(1, tag & 0x0fu);
    if (tag == 0xdc) return sized(2);
    if (tag == 0xdd) return sized(4);
    return std::nullopt;
  }

  // A string; does not move when it is something else or its bytes are cut short.
  std::optional<std::string_view> str() {
    if (!need(1)) return std::nullopt;
    const size_t start = off_;
    const uint8_t tag = p_[off_];
    std::optional<uint64_t> n;
    if (tag >= 0xa0 && tag <= 0xbf) {
      n = advance(1, tag & 0x1fu);
    } else if (tag == 0xd9) {
      n = sized(1);
    } else if (tag == 0xda) {
      n = sized(2);
    } else if (tag == 0xdb) {
      n = sized(4);
    }
    if (!n || !need(*n)) {
      off_ = start;
      return std::nullopt;
    }
    std::string_view s(reinterpret_cast<const char*>(p_ + off_), *n);
    off_ += *n;
    return s;
  }

  // A bool; does not move when it is something else.
  std::optional<bool> boolean() {
    if (!need(1) || (p_[off_] != 0xc2 && p_[off_] != 0xc3)) return std::nullopt;
    return p_[off_++] == 0xc3;
  }

  // A non-negative integer in any integer format (msgpack's decoder also reads a signed format
  // holding a value >= 0 as positive). Does not move when it is something else.
  std::optional<uint64_t> uint() {
    if (!need(1)) return std::nullopt;
    const uint8_t tag = p_[off_];
    if (tag <= 0x7f) return advance(1, tag);
    if (tag >= 0xcc && tag <= 0xcf) return sized(size_t{1} << (tag - 0xcc));
    if (tag >= 0xd0 && tag <= 0xd3) {
      const size_t n = size_t{1} << (tag - 0xd0);
      uint64_t v = 0;
      if (!length_at(n, v) || (v >> (8 * n - 1)) != 0) return std::nullopt;  // negative
      off_ += 1 + n;
      return v;
    }
    return std::nullopt;
  }

  // Steps over one whole object, nested ones included; false (offset unspecified) when the
  // bytes end first or hold the never-used tag 0xc1. Iterative: depth costs nothing.
  bool skip() {
    uint64_t pending = 1;
    while (pending > 0) {
      if (pending > size_ - off_) return false;  // every object takes at least one byte
      --pending;
      const uint8_t tag = p_[off_];
      uint64_t bytes = 0;     // payload after the header
      uint64_t children = 0;  // objects after the header
      size_t head = 1;
      if (!header(tag, head, bytes, children)) return false;
      if (!need(head)) return false;
      off_ += head;
      if (!need(bytes)) return false;
      off_ += bytes;
      pending += children;
    }
    return true;
  }

 private:
  // The header of the object whose tag is at the current offset: its size, the payload bytes
  // after it and the number of child objects (maps count keys and values). False when the
  // length cannot be read or for the never-used tag 0xc1.
  bool header(uint8_t tag, size_t& head, uint64_t& bytes, uint64_t& children) const {
    if (tag <= 0x7f || tag >= 0xe0) {
      // fixint
    } else if (tag <= 0x8f) {
      children = uint64_t{2} * (tag & 0x0fu);
    } else if (tag <= 0x9f) {
      children = tag & 0x0fu;
    } else if (tag <= 0xbf) {
      bytes = tag & 0x1fu;
    } else {
      switch (tag) {
        case 0xc0:  // nil
        case 0xc2:  // false
        case 0xc3:  // true
          break;
        case 0xc4:  // bin 8, 16, 32
        case 0xc5:
        case 0xc6:
          head = 1 + (size_t{1} << (tag - 0xc4));
          if (!length_at(head - 1, bytes)) return false;
          break;
        case 0xc7:  // ext 8, 16, 32: length, then a type byte
        case 0xc8:
        case 0xc9:
          head = 1 + (size_t{1} << (tag - 0xc7));
          if (!length_at(head - 1, bytes)) return false;
          ++head;
          break;
        case 0xca:
          head = 5;
          break;
        case 0xcb:
          head = 9;
          break;
        case 0xcc:  // uint 8..64
        case 0xcd:
        case 0xce:
        case 0xcf:
          head = 1 + (size_t{1} << (tag - 0xcc));
          break;
        case 0xd0:  // int 8..64
        case 0xd1:
        case 0xd2:
        case 0xd3:
          head = 1 + (size_t{1} << (tag - 0xd0));
          break;
        case 0xd4:  // fixext 1..16, after a type byte
        case 0xd5:
        case 0xd6:
        case 0xd7:
        case 0xd8:
          head = 2 + (size_t{1} << (tag - 0xd4));
          break;
        case 0xd9:  // str 8, 16, 32
        case 0xda:
        case 0xdb:
          head = 1 + (size_t{1} << (tag - 0xd9));
          if (!length_at(head - 1, bytes)) return false;
          break;
        case 0xdc:  // array 16, 32
        case 0xdd:
          head = 1 + (size_t{2} << (tag - 0xdc));
          if (!length_at(head - 1, children)) return false;
          break;
        case 0xde:  // map 16, 32
        case 0xdf:
          head = 1 + (size_t{2} << (tag - 0xde));
          if (!length_at(head - 1, children)) return false;
          children *= 2;
          break;
        default:  // 0xc1: never used
          return false;
      }
    }
    return true;
  }

  bool need(uint64_t n) const { return n <= size_ - off_; }

  uint64_t big_endian(size_t at, size_t n) const {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | p_[at + i];
    return v;
  }

  // The n-byte length after the tag at the current offset, without moving.
  bool length_at(size_t n, uint64_t& out) const {
    if (!need(1 + n)) return false;
    out = big_endian(off_ + 1, n);
    return true;
  }

  std::optional<uint64_t> advance(size_t n, uint64_t value) {
    off_ += n;
    return value;
  }

  // A tag followed by an n-byte big-endian value.
  std::optional<uint64_t> sized(size_t n) {
    uint64_t v = 0;
    if (!length_at(n, v)) return std::nullopt;
    off_ += 1 + n;
    return v;
  }

  const uint8_t* p_;
  size_t size_;
  size_t off_ = 0;
};

// Calls on_value(key) with the reader at each value of the map at the reader's position, for
// string keys; the callback must consume the value (or return false to stop). False when the
// map's structure is unreadable.
template <class OnValue>
bool walk_map(Reader& r, OnValue&& on_value) {
  auto n = r.map_header();
  if (!n) return false;
  for (uint64_t i = 0; i < *n; ++i) {
    auto key = r.str();
    if (!key) {
      if (!r.skip() || !r.skip()) return false;  // a non-string key and its value
      continue;
    }
    if (!on_value(*key)) return false;
  }
  return true;
}

// The unsigned integer `key` of the map whose bytes are [data, data + size) (a conversation's
// `index`, a start's `conversation_index`), read without decoding anything else.
std::optional<uint64_t> uint_field(const char* data, size_t size, std::string_view key) {
  Reader r(data, size);
  std::optional<uint64_t> value;
  walk_map(r, [&](std::string_view k) {
    if (k == key && !value) {
      value = r.uint();
      return value.has_value();
    }
    return r.skip();
  });
  return value;
}

// One element of an array, [data, data + size), decoded on its own with the usual limits.
template <class T>
bool decode_element(const char* data, size_t size, T& out, std::string& why) {
  try {
    size_t off = 0;
    msgpack::object_handle h = msgpack::unpack(data, size, off, nullptr, nullptr, decode_limits());
    h.get().convert(out);
    return true;
  } catch (const std::exception& e) {
    why = e.what();
    return false;
  }
}

// The walk of an Assign's body: each conversation decoded on its own, the window flag, and each
// window start.
class BodySalvage {
 public:
  BodySalvage(const char* base, size_t size, AssignSalvage& out)
      : base_(base), r_(base, size), out_(out) {}

  // False when the body's map could not be walked to its end.
  bool walk() {
    return walk_map(r_, [&](std::string_view key) {
      if (key == "batch" && out_.batch == 0 && !found_conversations) {
        if (auto b = r_.uint()) {
          out_.batch = *b;
          return true;
        }
        return r_.skip();  // unreadable: 0, the worker supplies the number
      }
      if (key == "conversations" && !found_conversations) {
        found_conversations = true;
        return conversations();
      }
      // As decode() reads a map, the first of each key counts.
      if (key == "window" && !found_window) return window();
      if (key == "start" && !found_start) return starts();
      return r_.skip();
    });
  }

  bool found_conversations = false;
  bool found_window = false;
  bool found_start = false;
  uint64_t conversation_count = 0;  // the length of the conversations array

 private:
  UndecodableAssign& unreadable() {
    if (!out_.undecodable) out_.undecodable = UndecodableAssign{out_.batch, {}, -1, ""};
    return *out_.undecodable;
  }

  bool conversations() {
    auto n = r_.array_header();
    if (!n) {
      unreadable().unreadable_from = 0;
      unreadable().error = "the batch's conversations are not an array";
      return false;
    }
    conversation_count = *n;
    for (uint64_t i = 0; i < *n; ++i) {
      const size_t start = r_.offset();
      if (!r_.skip()) {
        // The rest of the array cannot be delimited.
        unreadable().unreadable_from = static_cast<int64_t>(i);
        unreadable().error =
            "the conversations from position " + std::to_string(i) + " on are not readable msgpack";
        return false;
      }
      const char* element = base_ + start;
      const size_t element_size = r_.offset() - start;
      Conversation c;
      std::string why;
      if (decode_element(element, element_size, c, why)) {
        out_.conversations.push_back(std::move(c));
        continue;
      }
      why = "undecodable assignment: " + why;
      if (auto index = uint_field(element, element_size, "index")) {
        out_.failed.push_back({*index, why});
      } else if (i <= std::numeric_limits<uint32_t>::max()) {
        unreadable().positions.push_back(static_cast<uint32_t>(i));
        if (unreadable().error.empty()) unreadable().error = why;
      }
    }
    return true;
  }

  // A flag that is not a bool leaves it unknown.
  bool window() {
    auto flag = r_.boolean();
    out_.window = flag;
    found_window = true;
    return flag.has_value() || r_.skip();
  }

  // A start that does not decode is named by its conversation's index when that can be read.
  bool starts() {
    found_start = true;
    auto n = r_.array_header();
    if (!n) return r_.skip();
    for (uint64_t i = 0; i < *n; ++i) {
      const size_t start = r_.offset();
      if (!r_.skip()) return false;
      const char* element = base_ + start;
      const size_t element_size = r_.offset() - start;
      WindowStart s;
      std::string why;
      if (decode_element(element, element_size, s, why)) {
        out_.start.push_back(s);
      } else if (auto index = uint_field(element, element_size, "conversation_index")) {
        out_.unreadable_starts.push_back(*index);
      }
    }
    return true;
  }

  const char* base_;
  Reader r_;
  AssignSalvage& out_;
};

}  // namespace

std::optional<MsgType> peek_type(const void* data, size_t size) {
  if (size > kMaxMessageBytes) return std::nullopt;
  Reader r(data, size);
  std::optional<MsgType> type;
  bool unknown = false;
  // As decode() reads the envelope: the last integer "t" wins, an unknown one spoils it.
  walk_map(r, [&](std::string_view key) {
    if (key != "t") return r.skip();
    auto t = r.uint();
    if (!t) return r.skip();
    if (*t < static_cast<uint64_t>(MsgType::kHello) || *t > static_cast<uint64_t>(MsgType::kBye)) {
      unknown = true;
      return false;
    }
    type = static_cast<MsgType>(*t);
    return true;
  });
  if (unknown) return std::nullopt;
  return type;
}

std::optional<AssignSalvage> salvage_assign(const void* data, size_t size) {
  if (peek_type(data, size) != MsgType::kAssign) return std::nullopt;
  const char* bytes = static_cast<const char*>(data);
  AssignSalvage out;

  // The envelope's body.
  Reader envelope(data, size);
  std::optional<size_t> body_at;
  walk_map(envelope, [&](std::string_view key) {
    if (key == "b") body_at = envelope.offset();  // the last one, as decode() takes it
    return envelope.skip();
  });
  bool body_read = false;  // the whole body map was walked
  bool found_conversations = false;
  bool found_window = false;
  uint64_t conversation_count = 0;
  if (body_at) {
    BodySalvage body(bytes + *body_at, size - *body_at, out);
    body_read = body.walk();
    found_conversations = body.found_conversations;
    found_window = body.found_window;
    conversation_count = body.conversation_count;
  }
  // A body without a key reads as decode() reads it (no conversations, not a window batch);
  // one cut short is reported, and its window flag is unknown unless it came before the cut.
  if (!body_read && !out.undecodable) {
    out.undecodable = UndecodableAssign{out.batch, {}, -1, ""};
    if (!found_conversations) {
      out.undecodable->unreadable_from = 0;
      out.undecodable->error = "the batch's conversations are not readable";
    } else {
      // Every conversation was read: the cut came after them (the window flag or the starts).
      out.undecodable->unreadable_from = static_cast<int64_t>(conversation_count);
      out.undecodable->error = "the batch ends after its conversations (window flag, starts lost)";
    }
  }
  if (body_read && !found_window) out.window = false;
  if (out.undecodable) out.undecodable->batch = out.batch;
  return out;
}

}  // namespace convoy::proto
