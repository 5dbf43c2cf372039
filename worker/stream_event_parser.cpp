#include "worker/stream_event_parser.hpp"

#include <rapidjson/encodedstream.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include <array>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace convoy::worker {

namespace {

// SAX events -> content and usage. Mirrors the DOM path's lookups, including "the first member
// of a name wins" (RapidJSON's FindMember). Returns false (abort) on an error object: the DOM
// path reads those. Text is appended as content arrives; the caller rolls it back on abort.
class StreamEventHandler
    : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, StreamEventHandler> {
 public:
  StreamEventHandler(bool completions, std::string& text)
      : completions_(completions), text_(text) {}

  bool has_output() const { return has_output_; }
  bool has_reasoning() const { return has_reasoning_; }
  // The next value is a number whose value matters (an index or a token count).
  bool wants_number_value() const {
    return skip_depth_ == 0 && (slot_ == Slot::kIndex || slot_ == Slot::kPromptTokens ||
                                slot_ == Slot::kCompletionTokens || slot_ == Slot::kCachedTokens ||
                                slot_ == Slot::kReasoningTokens || worker_slot(slot_));
  }
  const Usage& usage() const { return usage_; }
  // nvext.worker_id, resolved as the DOM path does (reply_parser.cpp, served_by_of).
  ServedBy served_by() const {
    ServedBy out;
    if (!worker_[kDecode].empty()) {
      out.worker = worker_[kDecode];
      out.dp_rank = rank_[kDecode];
    } else if (!worker_[kPrefill].empty()) {
      out.worker = worker_[kPrefill];
      out.dp_rank = rank_[kPrefill];
    }
    out.present = !out.worker.empty();
    return out;
  }

  bool Null() { return scalar(Scalar::kNull, 0, nullptr, 0); }
  bool Bool(bool b) { return scalar(b ? Scalar::kTrue : Scalar::kFalse, 0, nullptr, 0); }
  bool Int(int i) { return number(i); }
  bool Uint(unsigned u) { return number(u); }
  bool Int64(int64_t i) { return number(i); }
  bool Uint64(uint64_t u) {
    if (skip_depth_ == 0 && worker_slot(slot_)) {
      // A worker id past int64 is still an id; a rank that large is none.
      const Slot slot = slot_;
      slot_ = Slot::kNone;
      if (slot == Slot::kDecodeWorker || slot == Slot::kPrefillWorker) {
        worker_[side(slot)] = std::to_string(u);
      } else if (u <= static_cast<uint64_t>(INT64_MAX)) {
        rank_[side(slot)] = static_cast<int64_t>(u);
      }
      return true;
    }
    return number(static_cast<int64_t>(u));
  }
  bool Double(double d) {
    if (skip_depth_ == 0 && worker_slot(slot_)) {  // ids and ranks are integers: none here
      slot_ = Slot::kNone;
      return true;
    }
    // Out of int64's range (or NaN) is unusual: stop, and the full parser takes the event.
    if (!(d > -9.2e18 && d < 9.2e18)) return false;
    return number(static_cast<int64_t>(d));
  }
  bool String(const char* str, rapidjson::SizeType length, bool) {
    return scalar(Scalar::kString, 0, str, length);
  }
  bool Key(const char* str, rapidjson::SizeType length, bool) {
    slot_ = key_slot(std::string_view(str, length));
    return slot_ != Slot::kDecline;
  }
  bool StartObject() { return open(true); }
  bool EndObject(rapidjson::SizeType) { return close(); }
  bool StartArray() { return open(false); }
  bool EndArray(rapidjson::SizeType) { return close(); }

 private:
  // Where a container sits; kSkip: nothing inside it matters.
  enum class Ctx : uint8_t {
    kSkip,
    kRoot,
    kChoices,
    kChoice,
    kHolder,
    kUsage,
    kDetails,
    kCompletionDetails,
    kNvext,
    kWorkerId,
  };
  // What the value after the current key means.
  enum class Slot : uint8_t {
    kNone,
    kDecline,  // a member the fast path leaves to the DOM path (nvext.timing)
    kChoices,
    kUsage,
    kError,
    kObject,
    kIndex,
    kDelta,
    kContent,
    kReasoning,
    kPromptTokens,
    kCompletionTokens,
    kDetails,
    kCachedTokens,
    kCompletionDetails,
    kReasoningTokens,
    kNvext,
    kWorkerId,
    kDecodeWorker,
    kDecodeRank,
    kPrefillWorker,
    kPrefillRank,
  };
  static constexpr size_t kDecode = 0;
  static constexpr size_t kPrefill = 1;
  static bool worker_slot(Slot s) {
    return s == Slot::kDecodeWorker || s == Slot::kDecodeRank || s == Slot::kPrefillWorker ||
           s == Slot::kPrefillRank;
  }
  static size_t side(Slot s) {
    return s == Slot::kDecodeWorker || s == Slot::kDecodeRank ? kDecode : kPrefill;
  }
  enum class Scalar : uint8_t { kNull, kTrue, kFalse, kNumber, kString };
  enum Seen : uint32_t {  // first-member-wins flags, per container
    kSeenChoices = 1u << 0,
    kSeenUsage = 1u << 1,
    kSeenError = 1u << 2,
    kSeenObject = 1u << 3,
    kSeenIndex = 1u << 4,
    kSeenDelta = 1u << 5,
    kSeenContent = 1u << 6,
    kSeenReasoningContent = 1u << 7,
    kSeenReasoning = 1u << 8,
    kSeenPrompt = 1u << 9,
    kSeenCompletion = 1u << 10,
    kSeenDetails = 1u << 11,
    kSeenCached = 1u << 12,
    kSeenNvext = 1u << 13,
    kSeenWorkerId = 1u << 14,
    kSeenDecodeWorker = 1u << 15,
    kSeenDecodeRank = 1u << 16,
    kSeenPrefillWorker = 1u << 17,
    kSeenPrefillRank = 1u << 18,
    kSeenCompletionDetails = 1u << 19,
    kSeenReasoningTokens = 1u << 20,
  };
  struct Frame {
    Ctx ctx = Ctx::kSkip;
    uint32_t seen = 0;
  };

  Ctx ctx() const { return depth_ == 0 ? Ctx::kSkip : frames_[depth_ - 1].ctx; }

  // Claims a member name in the current container: true the first time only.
  bool first(uint32_t flag) {
    Frame& f = frames_[depth_ - 1];
    if ((f.seen & flag) != 0) return false;
    f.seen |= flag;
    return true;
  }

  Slot key_slot(std::string_view key) {
    if (skip_depth_ > 0 || depth_ == 0) return Slot::kNone;
    switch (ctx()) {
      case Ctx::kRoot:
        if (key == "choices") return first(kSeenChoices) ? Slot::kChoices : Slot::kNone;
        if (key == "usage") return first(kSeenUsage) ? Slot::kUsage : Slot::kNone;
        if (key == "error") return first(kSeenError) ? Slot::kError : Slot::kNone;
        if (key == "object") return first(kSeenObject) ? Slot::kObject : Slot::kNone;
        if (key == "nvext") return first(kSeenNvext) ? Slot::kNvext : Slot::kNone;
        return Slot::kNone;
      case Ctx::kNvext:
        if (key == "timing") return Slot::kDecline;  // once a request: the DOM path reads it
        return key == "worker_id" && first(kSeenWorkerId) ? Slot::kWorkerId : Slot::kNone;
      case Ctx::kWorkerId:
        if (key == "decode_worker_id") {
          return first(kSeenDecodeWorker) ? Slot::kDecodeWorker : Slot::kNone;
        }
        if (key == "decode_dp_rank") {
          return first(kSeenDecodeRank) ? Slot::kDecodeRank : Slot::kNone;
        }
        if (key == "prefill_worker_id") {
          return first(kSeenPrefillWorker) ? Slot::kPrefillWorker : Slot::kNone;
        }
        if (key == "prefill_dp_rank") {
          return first(kSeenPrefillRank) ? Slot::kPrefillRank : Slot::kNone;
        }
        return Slot::kNone;
      case Ctx::kChoice:
        if (key == "index") return first(kSeenIndex) ? Slot::kIndex : Slot::kNone;
        if (completions_) {
          return key == "text" && first(kSeenContent) ? Slot::kContent : Slot::kNone;
        }
        return key == "delta" && first(kSeenDelta) ? Slot::kDelta : Slot::kNone;
      case Ctx::kHolder:
        if (key == "content") return first(kSeenContent) ? Slot::kContent : Slot::kNone;
        if (key == "reasoning_content") {
          return first(kSeenReasoningContent) ? Slot::kReasoning : Slot::kNone;
        }
        if (key == "reasoning") return first(kSeenReasoning) ? Slot::kReasoning : Slot::kNone;
        return Slot::kNone;
      case Ctx::kUsage:
        if (key == "prompt_tokens") return first(kSeenPrompt) ? Slot::kPromptTokens : Slot::kNone;
        if (key == "completion_tokens") {
          return first(kSeenCompletion) ? Slot::kCompletionTokens : Slot::kNone;
        }
        if (key == "prompt_tokens_details") {
          return first(kSeenDetails) ? Slot::kDetails : Slot::kNone;
        }
        if (key == "completion_tokens_details") {
          return first(kSeenCompletionDetails) ? Slot::kCompletionDetails : Slot::kNone;
        }
        return Slot::kNone;
      case Ctx::kDetails:
        return key == "cached_tokens" && first(kSeenCached) ? Slot::kCachedTokens : Slot::kNone;
      case Ctx::kCompletionDetails:
        return key == "reasoning_tokens" && first(kSeenReasoningTokens) ? Slot::kReasoningTokens
                                                                        : Slot::kNone;
      case Ctx::kChoices:
      case Ctx::kSkip:
        return Slot::kNone;
    }
    return Slot::kNone;
  }

  bool number(int64_t value) { return scalar(Scalar::kNumber, value, nullptr, 0); }

  bool scalar(Scalar kind, int64_t value, const char* str, rapidjson::SizeType length) {
    const Slot slot = slot_;
    slot_ = Slot::kNone;
    if (skip_depth_ > 0) return true;
    switch (slot) {
      case Slot::kError:  // {"error": null | false} is no error; anything else: the DOM path
        return kind == Scalar::kNull || kind == Scalar::kFalse;
      case Slot::kObject:
        return !(kind == Scalar::kString && std::string_view(str, length) == "error");
      case Slot::kIndex:
        if (kind == Scalar::kNumber) choice_index_ = value;
        return true;
      case Slot::kContent:
        if (kind == Scalar::kString && length > 0) {
          choice_has_output_ = true;
          text_.append(str, length);
        }
        return true;
      case Slot::kReasoning:
        if (kind == Scalar::kString && length > 0) choice_has_reasoning_ = true;
        return true;
      case Slot::kPromptTokens:
        if (kind == Scalar::kNumber) usage_.prompt_tokens = value;
        return true;
      case Slot::kCompletionTokens:
        if (kind == Scalar::kNumber) usage_.completion_tokens = value;
        return true;
      case Slot::kCachedTokens:
        if (kind == Scalar::kNumber) usage_.cached_tokens = value;
        return true;
      case Slot::kReasoningTokens:
        if (kind == Scalar::kNumber) usage_.reasoning_tokens = value;
        return true;
      case Slot::kDecodeWorker:
      case Slot::kPrefillWorker:
        if (kind == Scalar::kNumber && value >= 0) {
          worker_[side(slot)] = std::to_string(value);
        } else if (kind == Scalar::kString && length > 0) {
          worker_[side(slot)].assign(str, length);
        }
        return true;
      case Slot::kDecodeRank:
      case Slot::kPrefillRank:
        if (kind == Scalar::kNumber && value >= 0) rank_[side(slot)] = value;
        return true;
      default:
        return true;
    }
  }

  bool open(bool object) {
    const Slot slot = slot_;
    slot_ = Slot::kNone;
    if (skip_depth_ > 0) {
      ++skip_depth_;
      return true;
    }
    Ctx next = Ctx::kSkip;
    if (depth_ == 0) {
      next = object ? Ctx::kRoot : Ctx::kSkip;
    } else if (slot == Slot::kError) {
      return false;  // an error object or array: the DOM path reads it
    } else if (slot == Slot::kChoices && !object) {
      next = Ctx::kChoices;
    } else if (slot == Slot::kUsage && object) {
      next = Ctx::kUsage;
      usage_.present = true;
    } else if (slot == Slot::kDetails && object) {
      next = Ctx::kDetails;
    } else if (slot == Slot::kCompletionDetails && object) {
      next = Ctx::kCompletionDetails;
    } else if (slot == Slot::kDelta && object) {
      next = Ctx::kHolder;
    } else if (slot == Slot::kNvext && object) {
      next = Ctx::kNvext;
    } else if (slot == Slot::kWorkerId && object) {
      next = Ctx::kWorkerId;
    } else if (slot == Slot::kNone && ctx() == Ctx::kChoices && object) {
      next = Ctx::kChoice;
      choice_index_ = 0;
      choice_has_output_ = false;
      choice_has_reasoning_ = false;
      choice_text_start_ = text_.size();
    }
    if (next == Ctx::kSkip || depth_ == frames_.size()) {
      ++skip_depth_;
      return true;
    }
    frames_[depth_++] = Frame{next, 0};
    return true;
  }

  bool close() {
    if (skip_depth_ > 0) {
      --skip_depth_;
      return true;
    }
    if (depth_ == 0) return true;
    const Ctx closing = frames_[--depth_].ctx;
    if (closing == Ctx::kChoice) {
      // Only choice 0 goes into the text; its index may come after its content.
      if (choice_index_ != 0) text_.resize(choice_text_start_);
      has_output_ = has_output_ || choice_has_output_;
      has_reasoning_ = has_reasoning_ || choice_has_reasoning_;
    }
    return true;
  }

  const bool completions_;
  std::string& text_;
  std::array<Frame, 8> frames_{};
  size_t depth_ = 0;
  size_t skip_depth_ = 0;  // inside containers that do not matter
  Slot slot_ = Slot::kNone;
  bool has_output_ = false;
  bool has_reasoning_ = false;
  Usage usage_;
  std::array<std::string, 2> worker_;  // nvext.worker_id: [kDecode], [kPrefill]
  std::array<int64_t, 2> rank_ = {-1, -1};
  int64_t choice_index_ = 0;
  bool choice_has_output_ = false;
  bool choice_has_reasoning_ = false;
  size_t choice_text_start_ = 0;
};

// A hand-written scanner for the common case: valid JSON without exponents, \u escapes or
// integers over 18 digits, nested at most 32 deep. It feeds the same handler as RapidJSON's
// Reader and declines (false) on anything else, including every invalid input, so whatever it
// accepts RapidJSON accepts with the same SAX events; the Reader then decides the rest.
class Scanner {
 public:
  Scanner(std::string_view data, StreamEventHandler& handler, std::string& scratch)
      : p_(data.data()), end_(data.data() + data.size()), handler_(handler), scratch_(scratch) {}

  bool run() {
    skip_space();
    if (p_ == end_ || static_cast<unsigned char>(*p_) == 0xEF) return false;  // empty, BOM
    if (!value(0)) return false;
    skip_space();
    return p_ == end_;
  }

 private:
  static constexpr int kMaxDepth = 32;

  char peek() const { return p_ < end_ ? *p_ : '\0'; }
  void skip_space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  static bool digit(char c) { return c >= '0' && c <= '9'; }

  bool value(int depth) {
    switch (peek()) {
      case '{':
        return depth < kMaxDepth && object(depth);
      case '[':
        return depth < kMaxDepth && array(depth);
      case '"': {
        std::string_view s;
        return string(s) &&
               handler_.String(s.data(), static_cast<rapidjson::SizeType>(s.size()), true);
      }
      case 't':
        return literal("true") && handler_.Bool(true);
      case 'f':
        return literal("false") && handler_.Bool(false);
      case 'n':
        return literal("null") && handler_.Null();
      default:
        return number();
    }
  }

  bool object(int depth) {
    ++p_;
    if (!handler_.StartObject()) return false;
    skip_space();
    rapidjson::SizeType members = 0;
    if (peek() == '}') {
      ++p_;
      return handler_.EndObject(0);
    }
    for (;;) {
      std::string_view key;
      if (peek() != '"' || !string(key)) return false;
      if (!handler_.Key(key.data(), static_cast<rapidjson::SizeType>(key.size()), true)) {
        return false;
      }
      skip_space();
      if (peek() != ':') return false;
      ++p_;
      skip_space();
      if (!value(depth + 1)) return false;
      ++members;
      skip_space();
      const char c = peek();
      ++p_;
      if (c == '}') return handler_.EndObject(members);
      if (c != ',') return false;
      skip_space();
    }
  }

  bool array(int depth) {
    ++p_;
    if (!handler_.StartArray()) return false;
    skip_space();
    rapidjson::SizeType elements = 0;
    if (peek() == ']') {
      ++p_;
      return handler_.EndArray(0);
    }
    for (;;) {
      if (!value(depth + 1)) return false;
      ++elements;
      skip_space();
      const char c = peek();
      ++p_;
      if (c == ']') return handler_.EndArray(elements);
      if (c != ',') return false;
      skip_space();
    }
  }

  bool literal(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word) {
      return false;
    }
    p_ += word.size();
    return true;
  }

  // A string without escapes is a view into the input; with simple escapes it is decoded into
  // scratch_. \u escapes and control characters decline.
  bool string(std::string_view& out) {
    const char* start = ++p_;
    skip_plain_bytes();
    while (p_ < end_) {
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        out = std::string_view(start, static_cast<size_t>(p_ - start));
        ++p_;
        return true;
      }
      if (c == '\\') return escaped_string(start, out);
      if (c < 0x20) return false;
      ++p_;
    }
    return false;
  }

  // Moves over string bytes that need no attention (not '"', '\\' or a control character), 16
  // at a time where SSE2 is available; the byte loop in string() does the rest.
  void skip_plain_bytes() {
#if defined(__SSE2__)
    const __m128i quote = _mm_set1_epi8('"');
    const __m128i backslash = _mm_set1_epi8('\\');
    const __m128i control = _mm_set1_epi8(0x1F);
    while (end_ - p_ >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p_));
      const __m128i hit =
          _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                       _mm_cmpeq_epi8(_mm_max_epu8(v, control), control));  // v <= 0x1F
      const int mask = _mm_movemask_epi8(hit);
      if (mask != 0) {
        p_ += __builtin_ctz(static_cast<unsigned>(mask));
        return;
      }
      p_ += 16;
    }
#endif
  }

  bool escaped_string(const char* start, std::string_view& out) {
    scratch_.assign(start, static_cast<size_t>(p_ - start));
    while (p_ < end_) {
      const auto c = static_cast<unsigned char>(*p_++);
      if (c == '"') {
        out = scratch_;
        return true;
      }
      if (c < 0x20) return false;
      if (c != '\\') {
        scratch_.push_back(static_cast<char>(c));
        continue;
      }
      if (p_ == end_) return false;
      switch (*p_++) {
        case '"':
          scratch_.push_back('"');
          break;
        case '\\':
          scratch_.push_back('\\');
          break;
        case '/':
          scratch_.push_back('/');
          break;
        case 'b':
          scratch_.push_back('\b');
          break;
        case 'f':
          scratch_.push_back('\f');
          break;
        case 'n':
          scratch_.push_back('\n');
          break;
        case 'r':
          scratch_.push_back('\r');
          break;
        case 't':
          scratch_.push_back('\t');
          break;
        default:
          return false;  // \u or invalid
      }
    }
    return false;
  }

  bool number() {
    const bool negative = peek() == '-';
    if (negative) ++p_;
    const char* digits = p_;
    if (peek() == '0') {
      ++p_;
    } else if (digit(peek())) {
      while (digit(peek())) ++p_;
    } else {
      return false;
    }
    const auto int_digits = static_cast<size_t>(p_ - digits);
    bool fraction = false;
    if (peek() == '.') {
      ++p_;
      if (!digit(peek())) return false;
      while (digit(peek())) ++p_;
      fraction = true;
    }
    if (peek() == 'e' || peek() == 'E' || int_digits > 18) return false;
    if (fraction) {
      // Only the kind matters unless the handler wants the value: let RapidJSON convert it.
      return !handler_.wants_number_value() && handler_.Double(0.0);
    }
    int64_t v = 0;
    for (const char* d = digits; d < digits + int_digits; ++d) v = v * 10 + (*d - '0');
    return handler_.Int64(negative ? -v : v);
  }

  const char* p_;
  const char* end_;
  StreamEventHandler& handler_;
  std::string& scratch_;
};

void fill(ReplyChunk& chunk, const StreamEventHandler& handler) {
  chunk.valid_json = true;
  chunk.has_output = handler.has_output();
  chunk.has_reasoning = handler.has_reasoning();
  chunk.has_content = chunk.has_output || chunk.has_reasoning;
  chunk.usage = handler.usage();
  chunk.served_by = handler.served_by();
}

}  // namespace

std::optional<ReplyChunk> parse_stream_event_fast(std::string_view data, Endpoint endpoint,
                                                  std::string& text) {
  // Embeddings do not stream; responses and messages have their own parser (api_events.hpp).
  if (endpoint != Endpoint::kChat && endpoint != Endpoint::kCompletions) return std::nullopt;
  const bool completions = endpoint == Endpoint::kCompletions;
  const size_t text_size = text.size();
  ReplyChunk chunk;
  {
    std::string scratch;  // only escaped strings use it
    StreamEventHandler handler(completions, text);
    if (Scanner(data, handler, scratch).run()) {
      fill(chunk, handler);
      return chunk;
    }
    text.resize(text_size);
  }
  // RapidJSON's Reader: the same grammar, flags and stream type as GenericDocument::Parse(str,
  // length) in the DOM path (the stream skips a UTF-8 BOM), so validity is decided identically.
  StreamEventHandler handler(completions, text);
  rapidjson::MemoryStream memory(data.data(), data.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> stream(memory);
  rapidjson::Reader reader;
  const rapidjson::ParseResult result =
      reader.Parse<rapidjson::kParseIterativeFlag>(stream, handler);
  if (!result) {
    text.resize(text_size);
    if (result.Code() == rapidjson::kParseErrorTermination) return std::nullopt;
    return chunk;  // not JSON
  }
  fill(chunk, handler);
  return chunk;
}

}  // namespace convoy::worker
