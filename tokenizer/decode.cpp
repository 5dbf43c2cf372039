// decode_tokens (pipeline.hpp): the decoders of Hugging Face `tokenizers` 0.22 (decoders/).
#include <cstdlib>

#include "tokenizer/pipeline.hpp"
#include "tokenizer/unicode.hpp"

namespace convoy::tokenizer {

namespace {

using Tokens = std::vector<std::string>;

// Every byte-level character back to its byte; a token holding any other character stays as
// it is. All tokens become one (invalid UTF-8 repaired), as byte_level.rs's decode_chain.
Tokens byte_level(const Tokens& tokens) {
  std::string bytes;
  for (const std::string& t : tokens) {
    std::string mapped;
    bool all = true;
    for (std::size_t i = 0; i < t.size() && all;) {
      const int b = byte_level_byte(utf8_next(t, i));
      all = b >= 0;
      mapped += static_cast<char>(b);
    }
    bytes += all ? mapped : t;
  }
  return {utf8_repair(bytes)};
}

int fallback_byte(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  const std::string hex = t.substr(3, 2);
  char* end = nullptr;
  const long v = std::strtol(hex.c_str(), &end, 16);
  return end == hex.c_str() + 2 ? static_cast<int>(v) : -1;
}

// Runs of <0xXX> tokens become their text, or one U+FFFD per byte when not valid UTF-8.
Tokens byte_fallback(const Tokens& tokens) {
  Tokens out;
  std::string run;
  std::size_t run_len = 0;
  const auto flush = [&] {
    if (run_len == 0) return;
    if (utf8_valid(run)) {
      out.push_back(run);
    } else {
      for (std::size_t k = 0; k < run_len; ++k) out.emplace_back("\xEF\xBF\xBD");
    }
    run.clear();
    run_len = 0;
  };
  for (const std::string& t : tokens) {
    const int b = fallback_byte(t);
    if (b >= 0) {
      run += static_cast<char>(b);
      ++run_len;
      continue;
    }
    flush();
    out.push_back(t);
  }
  flush();
  return out;
}

void replace_in(std::string& t, const std::string& pattern, const std::string& content) {
  if (pattern.empty()) return;
  std::string out;
  std::size_t prev = 0;
  for (std::size_t at = t.find(pattern); at != std::string::npos;
       at = t.find(pattern, at + pattern.size())) {
    out.append(t, prev, at - prev).append(content);
    prev = at + pattern.size();
  }
  out.append(t, prev, std::string::npos);
  t = std::move(out);
}

// At most step.start leading and step.stop trailing characters equal to step.content go.
void strip(std::string& t, const DecoderStep& step) {
  for (std::size_t k = 0; k < step.start && t.rfind(step.content, 0) == 0 && !step.content.empty();
       ++k) {
    t.erase(0, step.content.size());
  }
  for (std::size_t k = 0;
       k < step.stop && !step.content.empty() && t.size() >= step.content.size() &&
       t.compare(t.size() - step.content.size(), std::string::npos, step.content) == 0;
       ++k) {
    t.erase(t.size() - step.content.size());
  }
}

}  // namespace

std::string decode_tokens(const std::vector<DecoderStep>& steps, std::vector<std::string> tokens) {
  for (const DecoderStep& step : steps) {
    switch (step.kind) {
      case DecoderStep::Kind::kByteLevel:
        tokens = byte_level(tokens);
        break;
      case DecoderStep::Kind::kByteFallback:
        tokens = byte_fallback(tokens);
        break;
      case DecoderStep::Kind::kReplace:
        for (std::string& t : tokens) replace_in(t, step.pattern, step.content);
        break;
      case DecoderStep::Kind::kFuse: {
        std::string all;
        for (const std::string& t : tokens) all += t;
        tokens = {all};
        break;
      }
      case DecoderStep::Kind::kStrip:
        for (std::string& t : tokens) strip(t, step);
        break;
      case DecoderStep::Kind::kMetaspace:
        // metaspace.rs: each replacement is a " ", except in the first token, where every one
        // goes (not only a leading one) unless prepend_scheme is "never".
        for (std::size_t k = 0; k < tokens.size(); ++k) {
          replace_in(tokens[k], step.pattern, k == 0 && step.prepend ? "" : " ");
        }
        break;
    }
  }
  // Without a decoder the reference joins the tokens with spaces (tokenizer/mod.rs).
  std::string out;
  for (std::size_t k = 0; k < tokens.size(); ++k) {
    if (k > 0 && steps.empty()) out += ' ';
    out += tokens[k];
  }
  return out;
}

}  // namespace convoy::tokenizer
