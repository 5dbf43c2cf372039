#include "mock/response_store.hpp"

#include "mock/tokens.hpp"

namespace convoy::mock {

std::optional<std::string> ResponseStore::find(const std::string& id) const {
  std::lock_guard lock(mutex_);
  const auto it = by_id_.find(id);
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

void ResponseStore::put(const std::string& id, std::string sequence) {
  std::lock_guard lock(mutex_);
  const auto [it, added] = by_id_.insert_or_assign(id, std::move(sequence));
  if (!added) return;
  order_.push_back(id);
  while (order_.size() > capacity_) {
    by_id_.erase(order_.front());
    order_.pop_front();
  }
}

size_t ResponseStore::size() const {
  std::lock_guard lock(mutex_);
  return by_id_.size();
}

std::optional<ApiError> chain_previous(const ResponseStore& store, ApiRequest& req) {
  if (req.previous_response_id.empty()) return std::nullopt;
  std::optional<std::string> kept = store.find(req.previous_response_id);
  if (!kept) {
    return bad_request("Previous response with id '" + req.previous_response_id + "' not found.");
  }
  req.prompt = *kept + req.prompt;
  req.prompt_tokens = count_tokens(req.prompt);
  return std::nullopt;
}

void remember_response(ResponseStore& store, const std::string& id, const std::string& prompt,
                       int64_t output_tokens) {
  std::string sequence = prompt;
  sequence.append(output_text(output_tokens));
  sequence.append(kChatMessageEnd);
  store.put(id, std::move(sequence));
}

}  // namespace convoy::mock
