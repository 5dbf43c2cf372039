#include "mock/tokens.hpp"

#include <array>

#include "common/hash.hpp"

namespace convoy::mock {

namespace {

// The basis is FNV's offset basis with its last digit missing (1469598103934665603, not
// 14695981039346656037): a slip of the first version, kept because the mock's block hashes (and
// with them its cache hits) must not change between releases.
constexpr uint64_t kChainBasis = 1469598103934665603ULL;

// FNV-1a over the block, seeded with the parent's hash, then a splitmix64 step so that
// neighbouring prefixes do not share low bits in the cache's hash table.
uint64_t chain_hash(uint64_t parent, std::string_view block) {
  return splitmix64(fnv1a64(block, kChainBasis ^ parent));
}

constexpr std::array<std::string_view, 16> kWords = {" the", " fox", " sky", " sea", " sun", " map",
                                                     " key", " cat", " owl", " ink", " oak", " elm",
                                                     " jar", " bay", " dew", " fig"};

}  // namespace

int64_t count_tokens(std::string_view text) {
  return (static_cast<int64_t>(text.size()) + kBytesPerToken - 1) / kBytesPerToken;
}

std::vector<uint64_t> block_hashes(std::string_view text, int block_size) {
  const auto block_bytes = static_cast<size_t>(block_size) * static_cast<size_t>(kBytesPerToken);
  std::vector<uint64_t> hashes;
  if (block_bytes == 0) return hashes;
  hashes.reserve(text.size() / block_bytes);
  uint64_t parent = 0;
  for (size_t offset = 0; offset + block_bytes <= text.size(); offset += block_bytes) {
    parent = chain_hash(parent, text.substr(offset, block_bytes));
    hashes.push_back(parent);
  }
  return hashes;
}

void append_chat_message(std::string& out, std::string_view role, std::string_view content) {
  out.append(kChatMessageStart);
  out.append(role);
  out.push_back('\n');
  out.append(content);
  out.append(kChatMessageEnd);
}

std::string_view output_token(uint64_t index) { return kWords[index % kWords.size()]; }

std::string output_text(int64_t tokens) {
  std::string text;
  text.reserve(static_cast<size_t>(tokens * kBytesPerToken));
  for (int64_t i = 0; i < tokens; ++i) text.append(output_token(static_cast<uint64_t>(i)));
  return text;
}

}  // namespace convoy::mock
