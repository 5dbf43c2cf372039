// Failed requests grouped by failure mode, in bounded memory: (code, type, normalised message)
// is one group, at most ErrorGroups::kMaxGroups of them (later distinct errors share one "other"
// group), each with its first raw message and a few correlation ids to look up.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "proto/messages.hpp"

namespace convoy::controller {

// An error group: (code, type, message). code is the HTTP status for http_status errors and 0
// otherwise, where type is the error kind ("connect", "stream_disconnected", ...).
struct ErrorGroup {
  int64_t code = 0;
  std::string type;
  std::string message;  // normalised (error_group_message): the same for the whole group
  std::string example;  // the group's first raw message
  int64_t count = 0;
  std::vector<std::string> example_correlation_ids;  // at most ErrorGroups::kExamples
};

// The grouping key of an error message, so that one failure mode is one group: every number
// that is not part of a word (byte counts, milliseconds, positions like serde's "at line 1
// column 187", ports, addresses, hex) becomes "N" and every uuid "ID". "Operation timed out
// after 5001 milliseconds with 1234 out of -1 bytes received" becomes "Operation timed out after
// N milliseconds with N out of N bytes received"; "h2", "gpt-4" and "llama-3.1-8b" stay as they
// are.
std::string error_group_message(std::string_view message);

class ErrorGroups {
 public:
  static constexpr size_t kMaxGroups = 64;  // more distinct errors share one group
  static constexpr size_t kExamples = 3;    // correlation ids kept per group
  static constexpr size_t kMaxMessageBytes = 512;

  // One failed request (record.error is set).
  void add(const proto::Record& record);
  // Every group, largest count first (ties: by key).
  std::vector<ErrorGroup> groups() const;
  size_t memory_bytes() const;

 private:
  using Key = std::tuple<int64_t, std::string, std::string>;  // code, type, normalised message
  std::map<Key, ErrorGroup> groups_;                          // at most kMaxGroups + 1
};

}  // namespace convoy::controller
