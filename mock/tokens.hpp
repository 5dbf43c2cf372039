// The mock's tokenizer: deterministic, documented, and prefix-stable.
//
// A prompt is flattened to bytes (chat messages with a ChatML-like template, see
// flatten_chat), and every 4 bytes count as one token, rounded up. Output tokens are 4-byte
// words, so a reply the client sends back in the next turn's history counts as exactly as
// many tokens as were generated. KV blocks are runs of block_size tokens (4 * block_size
// bytes); only full blocks are hashed and cached, and each block's hash chains its parent's,
// so a block hash names the whole prefix up to it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace convoy::mock {

inline constexpr int64_t kBytesPerToken = 4;

// ceil(bytes / 4).
int64_t count_tokens(std::string_view text);

// Chained hashes of the full blocks of `text`.
std::vector<uint64_t> block_hashes(std::string_view text, int block_size);

// Chat template pieces: flatten_chat appends, per message,
// "<|im_start|>" role "\n" content "<|im_end|>\n", then the generation prompt
// "<|im_start|>assistant\n". The sequence the engine holds after a reply is
// prompt + reply + kChatMessageEnd, which is exactly the prefix of the next turn's prompt.
inline constexpr std::string_view kChatMessageStart = "<|im_start|>";
inline constexpr std::string_view kChatMessageEnd = "<|im_end|>\n";
inline constexpr std::string_view kChatGenerationPrompt = "<|im_start|>assistant\n";
void append_chat_message(std::string& out, std::string_view role, std::string_view content);

// The text of output token `index` of a response (always kBytesPerToken bytes).
std::string_view output_token(uint64_t index);
// Tokens [0, tokens) concatenated: the text of a whole response.
std::string output_text(int64_t tokens);

// Prefill time of `uncached_tokens` (Dynamo's mocker formula), in model milliseconds.
inline double prefill_ms(int64_t uncached_tokens) {
  const auto t = static_cast<double>(uncached_tokens);
  return 4.209989e-7 * t * t + 1.518344e-2 * t + 16.50142;
}

}  // namespace convoy::mock
