#include "tokenizer/regex.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <stdexcept>

#include "tokenizer/unicode.hpp"

namespace convoy::tokenizer {

namespace {

std::string pcre2_message(int code) {
  std::array<PCRE2_UCHAR, 256> buf{};
  pcre2_get_error_message(code, buf.data(), buf.size());
  return reinterpret_cast<const char*>(buf.data());
}

constexpr PCRE2_SIZE kJitStackStart = PCRE2_SIZE{32} << 10;
constexpr PCRE2_SIZE kJitStackMax = PCRE2_SIZE{8} << 20;

// Per thread: match data for one pair (only the whole match is read) and a JIT stack large
// enough for \s+ over long whitespace runs. Shared by every Regex a thread matches with.
struct ThreadMatch {
  pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
  pcre2_jit_stack* stack = pcre2_jit_stack_create(kJitStackStart, kJitStackMax, nullptr);
  pcre2_match_context* context = pcre2_match_context_create(nullptr);
  ThreadMatch() { pcre2_jit_stack_assign(context, nullptr, stack); }
  ~ThreadMatch() {
    pcre2_match_context_free(context);
    pcre2_jit_stack_free(stack);
    pcre2_match_data_free(data);
  }
  ThreadMatch(const ThreadMatch&) = delete;
  ThreadMatch& operator=(const ThreadMatch&) = delete;
};

}  // namespace

std::string onig_to_pcre2(std::string_view pattern) {
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char e = pattern[++i];
      if (e == 's') {
        out += in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
      } else if (e == 'S' && !in_class) {
        out += "[^\\s\\x{85}]";
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

struct Regex::Code {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Code() { pcre2_code_free(code); }
};

Regex::Regex(const std::string& pcre2_pattern) : code_(std::make_unique<Code>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  code_->code =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pcre2_pattern.data()), pcre2_pattern.size(),
                    PCRE2_UTF | PCRE2_UCP, &error, &offset, nullptr);
  if (code_->code == nullptr) {
    throw std::invalid_argument("bad pattern at offset " + std::to_string(offset) + ": " +
                                pcre2_message(error));
  }
  code_->jit = pcre2_jit_compile(code_->code, PCRE2_JIT_COMPLETE) == 0;
}

Regex::~Regex() = default;
Regex::Regex(Regex&&) noexcept = default;
Regex& Regex::operator=(Regex&&) noexcept = default;

void Regex::find_all(std::string_view s,
                     std::vector<std::pair<std::size_t, std::size_t>>& out) const {
  thread_local ThreadMatch tm;
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(s.data());
  std::size_t start = 0;
  while (start <= s.size()) {
    // The subject is valid UTF-8 (the encoder repairs its input), so PCRE2 need not check it
    // again on every call.
    const int rc = code_->jit ? pcre2_jit_match(code_->code, subject, s.size(), start,
                                                PCRE2_NO_UTF_CHECK, tm.data, tm.context)
                              : pcre2_match(code_->code, subject, s.size(), start,
                                            PCRE2_NO_UTF_CHECK, tm.data, tm.context);
    if (rc == PCRE2_ERROR_NOMATCH) return;
    if (rc < 0) throw std::runtime_error("pattern match failed: " + pcre2_message(rc));
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(tm.data);
    out.emplace_back(ov[0], ov[1]);
    if (ov[1] > ov[0]) {
      start = ov[1];
    } else if (ov[1] >= s.size()) {
      return;
    } else {
      start = ov[1] + utf8_length(s, ov[1]);
    }
  }
}

}  // namespace convoy::tokenizer
