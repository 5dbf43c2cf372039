// rapidjson's Writer for the controller's per-record lines (records.jsonl), with its string
// writing replaced by one that copies runs of plain bytes eight at a time.
//
// Writer::WriteString looks every byte up in its escape table; a records.jsonl line is ~35 keys
// and ~8 string values, and that loop was the largest single cost of writing it (13% of ingest,
// bench (e)). The output is byte for byte what Writer::WriteString writes for UTF-8 in and out
// with the default flags: '"' and '\\' escaped, \b \f \n \r \t by name, the other bytes below
// 0x20 as \u00XX, every other byte (UTF-8 included) as it is. Only String and Key are replaced;
// numbers, literals, RawValue and the structure are the base Writer's. Keys written as string
// literals skip the escape scan and the strlen: they are copied whole.
#pragma once

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace convoy::controller {

// Appends `s` as a JSON string (quotes included) to `out`, as rapidjson's Writer would.
inline void append_json_string(rapidjson::StringBuffer& out, const char* s, size_t n) {
  // rapidjson's table: 'u' for the control bytes without a short name, 0 for bytes kept.
  static constexpr char kEscape[32] = {'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n',
                                       'u', 'f', 'r', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
                                       'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u'};
  static constexpr char kHex[] = "0123456789ABCDEF";
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  // Whether any byte of `w` is zero: exact as a yes/no (the bit trick may mark the wrong byte).
  auto has_zero = [](uint64_t w) { return ((w - kOnes) & ~w & kHighs) != 0; };
  auto plain = [&](uint64_t w) {
    const bool control = ((w - kOnes * 0x20) & ~w & kHighs) != 0;  // a byte below 0x20
    return !control && !has_zero(w ^ (kOnes * '"')) && !has_zero(w ^ (kOnes * '\\'));
  };
  const size_t reserve = 2 + n * 6;
  char* const begin = out.Push(reserve);
  char* q = begin;
  *q++ = '"';
  size_t i = 0;
  while (i < n) {
    while (i + 8 <= n) {
      uint64_t w = 0;
      std::memcpy(&w, s + i, sizeof w);
      if (!plain(w)) break;
      std::memcpy(q, s + i, sizeof w);
      q += 8;
      i += 8;
    }
    if (i >= n) break;
    const auto c = static_cast<unsigned char>(s[i++]);
    if (c >= 0x20 && c != '"' && c != '\\') {
      *q++ = static_cast<char>(c);
      continue;
    }
    *q++ = '\\';
    if (c >= 0x20) {
      *q++ = static_cast<char>(c);  // '"' or '\\'
      continue;
    }
    *q++ = kEscape[c];
    if (kEscape[c] == 'u') {
      *q++ = '0';
      *q++ = '0';
      *q++ = kHex[c >> 4];
      *q++ = kHex[c & 0xF];
    }
  }
  *q++ = '"';
  out.Pop(reserve - static_cast<size_t>(q - begin));
}

class JsonLineWriter : public rapidjson::Writer<rapidjson::StringBuffer> {
 public:
  explicit JsonLineWriter(rapidjson::StringBuffer& out) : Writer(out) {}

  bool String(const char* s, rapidjson::SizeType n) {
    Prefix(rapidjson::kStringType);
    append_json_string(*os_, s, n);
    return EndValue(true);
  }
  bool String(const char* s) { return String(s, static_cast<rapidjson::SizeType>(std::strlen(s))); }
  bool String(std::string_view s) {
    return String(s.data(), static_cast<rapidjson::SizeType>(s.size()));
  }
  bool Key(const char* s, rapidjson::SizeType n) { return String(s, n); }
  // A key written in the code (a string literal of plain ASCII: nothing to escape), copied whole
  // with its quotes; the same bytes as Key(s, n). A name held in a variable goes through
  // Key(s, n), which escapes.
  template <size_t N>
  bool Key(const char (&literal)[N]) {
    return PlainKey(std::string_view(literal, N - 1));  // without the terminating NUL
  }
  // A key the code names (plain ASCII, nothing to escape) held in a variable, such as a field
  // table's names (proto::kRecordTimestamps): copied whole, as Key(literal).
  bool PlainKey(std::string_view name) {
    const size_t n = name.size();
    Prefix(rapidjson::kStringType);
    char* q = os_->Push(n + 2);
    q[0] = '"';
    std::memcpy(q + 1, name.data(), n);
    q[n + 1] = '"';
    return EndValue(true);
  }
};

}  // namespace convoy::controller
