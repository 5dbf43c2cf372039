// The conversations behind the Responses API's ids: what previous_response_id chains a turn to.
// Bounded (the oldest ids are forgotten first); thread-safe (any session thread stores and
// reads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "mock/api_error.hpp"
#include "mock/api_request.hpp"

namespace convoy::mock {

class ResponseStore {
 public:
  static constexpr size_t kDefaultCapacity = 100000;  // ids kept; older ones are forgotten
  ResponseStore() = default;
  explicit ResponseStore(size_t capacity) : capacity_(capacity) {}

  // The whole sequence (prompt, reply, end marker) of response `id`, if still kept.
  std::optional<std::string> find(const std::string& id) const;
  // Keeps `sequence` for `id`, forgetting the oldest id beyond the capacity.
  void put(const std::string& id, std::string sequence);
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::string> by_id_;  // id -> its whole sequence
  std::deque<std::string> order_;                       // ids, oldest first
  size_t capacity_ = kDefaultCapacity;                  // >= 1
};

// responses with previous_response_id: the request's prompt becomes the kept conversation
// followed by its own input (prompt_tokens recounted). An unknown id is a 400, as OpenAI
// answers it ("Previous response with id '...' not found."). No id: nothing changes.
std::optional<ApiError> chain_previous(const ResponseStore& store, ApiRequest& req);

// Keeps a finished response: its prompt, its `output_tokens` output tokens and the end marker
// the chat template puts after a reply (so the next turn's prompt extends it, as chat's does).
void remember_response(ResponseStore& store, const std::string& id, const std::string& prompt,
                       int64_t output_tokens);

}  // namespace convoy::mock
