#include "controller/report/error_groups.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

namespace convoy::controller {

namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool hex_digit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// A uuid (8-4-4-4-12 hex digits) starting at i and not running on into a word.
bool uuid_at(std::string_view s, size_t i) {
  static constexpr size_t kLength = 36;
  if (s.size() - i < kLength) return false;
  for (size_t k = 0; k < kLength; ++k) {
    const char c = s[i + k];
    if (k == 8 || k == 13 || k == 18 || k == 23 ? c != '-' : !hex_digit(c)) return false;
  }
  return i + kLength == s.size() || !word_char(s[i + kLength]);
}

// Where a number may start: not inside a word ("h2", "gpt-4", "v1.2", "llama-3.1-8b" keep
// their digits), so after a separator, or after a sign that itself follows a separator.
bool number_boundary(std::string_view s, size_t i) {
  if (i == 0) return true;
  const char before = s[i - 1];
  if (word_char(before)) return false;
  if (before == '-' || before == '.') return i < 2 || !word_char(s[i - 2]);
  return true;
}

// One past the number starting at i: hex (0x7f3a), or digits with inner dots or commas (1.5,
// 127.0.0.1, 1,024).
size_t number_end(std::string_view s, size_t i) {
  size_t j = i;
  if (s[j] == '0' && j + 2 < s.size() && (s[j + 1] == 'x' || s[j + 1] == 'X') &&
      hex_digit(s[j + 2])) {
    j += 2;
    while (j < s.size() && hex_digit(s[j])) ++j;
    return j;
  }
  while (j < s.size()) {
    if (digit(s[j])) {
      ++j;
    } else if ((s[j] == '.' || s[j] == ',') && j + 1 < s.size() && digit(s[j + 1])) {
      j += 2;
    } else {
      break;
    }
  }
  return j;
}

std::string truncate_utf8(const std::string& s, size_t max_bytes) {
  if (s.size() <= max_bytes) return s;
  size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(s[end]) & 0xC0) == 0x80) --end;
  return s.substr(0, end) + "...";
}

}  // namespace

std::string error_group_message(std::string_view message) {
  // Byte counts, durations, positions ("at line 1 column 187"), ports, addresses and ids vary
  // from one request to the next: each would split one failure mode into a group per request.
  std::string out;
  out.reserve(message.size());
  size_t i = 0;
  while (i < message.size()) {
    const char c = message[i];
    if (hex_digit(c) && number_boundary(message, i) && uuid_at(message, i)) {
      out += "ID";
      i += 36;
      continue;
    }
    if (digit(c) && number_boundary(message, i)) {
      // A sign right before it is part of it ("out of -1 bytes").
      if (!out.empty() && (out.back() == '-' || out.back() == '+') &&
          (i < 2 || !word_char(message[i - 2]))) {
        out.pop_back();
      }
      out += 'N';
      i = number_end(message, i);
      continue;
    }
    out += c;
    ++i;
  }
  return out;
}

void ErrorGroups::add(const proto::Record& record) {
  const proto::RecordError& e = record.error;
  int64_t code = 0;
  std::string type;
  if (e.kind == proto::ErrorKind::kHttpStatus) {
    code = record.http_status != 0 ? record.http_status : e.code;
    type = e.type.empty() ? std::string(proto::to_string(e.kind)) : e.type;
  } else {
    type = std::string(proto::to_string(e.kind));
  }
  std::string message = truncate_utf8(e.message, kMaxMessageBytes);
  Key key{code, std::move(type), error_group_message(message)};
  auto it = groups_.find(key);
  if (it == groups_.end()) {
    if (groups_.size() >= kMaxGroups) {
      key = Key{0, "other", "more distinct errors than the summary keeps"};
      message = std::get<2>(key);
    }
    it = groups_.try_emplace(key).first;
    it->second.code = std::get<0>(key);
    it->second.type = std::get<1>(key);
    it->second.message = std::get<2>(key);  // the normalised message names the group
    it->second.example = message;           // the first raw one shows what it looked like
  }
  ErrorGroup& group = it->second;
  ++group.count;
  if (group.example_correlation_ids.size() < kExamples) {
    group.example_correlation_ids.push_back(record.x_correlation_id);
  }
}

std::vector<ErrorGroup> ErrorGroups::groups() const {
  std::vector<ErrorGroup> out;
  out.reserve(groups_.size());
  for (const auto& [key, group] : groups_) out.push_back(group);
  std::stable_sort(out.begin(), out.end(),
                   [](const ErrorGroup& a, const ErrorGroup& b) { return a.count > b.count; });
  return out;
}

size_t ErrorGroups::memory_bytes() const {
  size_t bytes = 0;
  for (const auto& [key, group] : groups_) {
    bytes += sizeof(key) + sizeof(group) + 2 * (group.type.capacity() + group.message.capacity()) +
             group.example.capacity();
    for (const auto& id : group.example_correlation_ids) {
      bytes += sizeof(std::string) + id.capacity();
    }
  }
  return bytes;
}

}  // namespace convoy::controller
