#include "controller/dataset/ids.hpp"

#include "controller/dataset/rng.hpp"

namespace convoy::controller {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_hex(std::string& out, uint64_t bits, int nibbles) {
  for (int i = nibbles - 1; i >= 0; --i) {
    out.push_back(kHex[(bits >> (4 * i)) & 0xF]);
  }
}

// uuid4 text from a generator's next 128 bits.
std::string uuid4_from(Rng& rng) {
  uint64_t hi = rng.next_u64();
  uint64_t lo = rng.next_u64();
  hi = (hi & ~0xF000ull) | 0x4000ull;                         // version 4
  lo = (lo & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;  // variant 10xx
  std::string out;
  out.reserve(36);
  append_hex(out, hi >> 32, 8);
  out.push_back('-');
  append_hex(out, hi >> 16, 4);
  out.push_back('-');
  append_hex(out, hi, 4);
  out.push_back('-');
  append_hex(out, lo >> 48, 4);
  out.push_back('-');
  append_hex(out, lo, 12);
  return out;
}

}  // namespace

std::string correlation_id(uint64_t seed, uint64_t index) {
  Rng rng(seed, index, Stream::kCorrelationId);
  return uuid4_from(rng);
}

std::string subagent_correlation_id(uint64_t seed, uint64_t lead_index, uint64_t position) {
  Rng rng(seed, lead_index, position, Stream::kSubagentId);
  return uuid4_from(rng);
}

void set_family_ids(proto::Conversation& conversation, uint64_t seed, uint64_t index,
                    uint64_t cycle) {
  conversation.index = index;
  conversation.correlation_id = correlation_id(seed, index);
  const std::string suffix = cycle > 0 ? "#" + std::to_string(cycle) : std::string();
  conversation.conversation_id += suffix;
  for (size_t p = 0; p < conversation.subagents.size(); ++p) {
    auto& child = conversation.subagents[p];
    child.correlation_id = subagent_correlation_id(seed, index, p);
    child.conversation_id += suffix;
  }
}

std::string default_conversation_id(uint64_t index) { return "conv-" + std::to_string(index); }

std::string default_subagent_id(std::string_view lead_id, uint64_t position) {
  return std::string(lead_id) + "/sub" + std::to_string(position);
}

bool is_uuid4(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (c != '-') return false;
    } else if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
      return false;
    }
  }
  const char variant = text[19];
  return text[14] == '4' && (variant == '8' || variant == '9' || variant == 'a' || variant == 'b');
}

}  // namespace convoy::controller
