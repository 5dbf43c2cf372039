#include "controller/dataset/request_hints.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "controller/dataset/rng.hpp"

namespace convoy::controller {

namespace {

using Value = rapidjson::Value;
using Allocator = rapidjson::Document::AllocatorType;

// The member `key` of object `v`, added as an empty object when absent (replaced when not one).
Value& object_member(Value& v, const char* key, Allocator& a) {
  auto it = v.FindMember(key);
  if (it == v.MemberEnd()) {
    v.AddMember(Value(key, a), Value(rapidjson::kObjectType), a);
    it = v.FindMember(key);
  } else if (!it->value.IsObject()) {
    it->value.SetObject();
  }
  return it->value;
}

// Sets `key` unless the object already has it (the dataset's own value wins).
void add_if_absent(Value& v, const char* key, Value value, Allocator& a) {
  if (!v.HasMember(key)) v.AddMember(Value(key, a), value, a);
}

void apply_to_turn(const DatasetConfig& d, const ConversationHints& h, proto::Turn& turn) {
  rapidjson::Document extra;
  if (!turn.extra_json.empty()) extra.Parse(turn.extra_json.data(), turn.extra_json.size());
  if (extra.HasParseError() || !extra.IsObject()) extra.SetObject();
  Allocator& a = extra.GetAllocator();
  Value& nvext = object_member(extra, "nvext", a);
  if (!h.tenant.empty()) add_if_absent(nvext, "cache_salt", Value(h.tenant.c_str(), a), a);
  if (d.agent_hints) {
    Value& hints = object_member(nvext, "agent_hints", a);
    if (h.priority) add_if_absent(hints, "priority", Value(*h.priority), a);
    if (h.strict_priority) add_if_absent(hints, "strict_priority", Value(*h.strict_priority), a);
    if (d.agent_hints->osl && turn.max_tokens > 0) {
      add_if_absent(hints, "osl", Value(turn.max_tokens), a);
    }
    if (d.agent_hints->speculative_prefill) {
      add_if_absent(hints, "speculative_prefill", Value(*d.agent_hints->speculative_prefill), a);
    }
  }
  rapidjson::StringBuffer out;
  rapidjson::Writer<rapidjson::StringBuffer> w(out);
  extra.Accept(w);
  turn.extra_json.assign(out.GetString(), out.GetSize());
}

class HintedDataset final : public Dataset {
 public:
  HintedDataset(std::unique_ptr<Dataset> inner, const Config& config)
      : inner_(std::move(inner)), dataset_(config.dataset), seed_(config.seed) {}

  uint64_t size() const override { return inner_->size(); }
  int64_t start_ns(uint64_t index) const override { return inner_->start_ns(index); }
  proto::Conversation conversation(uint64_t index) const override {
    proto::Conversation c = inner_->conversation(index);
    apply_hints(dataset_, seed_, c);
    return c;
  }

 private:
  std::unique_ptr<Dataset> inner_;
  DatasetConfig dataset_;
  uint64_t seed_;
};

}  // namespace

ConversationHints draw_hints(const DatasetConfig& d, uint64_t seed, uint64_t index) {
  ConversationHints h;
  // One generator per conversation, draws in a fixed order: tenant, priority, strict priority.
  Rng rng(seed, index, Stream::kRequestHints);
  if (!d.tenants.empty()) {
    double total = 0;
    for (const WeightedName& t : d.tenants) total += t.weight;
    double x = rng.uniform01() * total;
    h.tenant = d.tenants.back().name;  // rounding past the last weight
    for (const WeightedName& t : d.tenants) {
      if (x < t.weight) {
        h.tenant = t.name;
        break;
      }
      x -= t.weight;
    }
  }
  if (d.agent_hints && d.agent_hints->priority) {
    h.priority = std::min<int64_t>(draw_integer(*d.agent_hints->priority, rng, INT32_MIN),
                                   INT32_MAX);  // a tail past Dynamo's i32
  }
  if (d.agent_hints && d.agent_hints->strict_priority) {
    h.strict_priority =
        std::min<int64_t>(draw_integer(*d.agent_hints->strict_priority, rng, 0), UINT32_MAX);
  }
  return h;
}

void apply_hints(const DatasetConfig& d, uint64_t seed, proto::Conversation& c) {
  const ConversationHints h = draw_hints(d, seed, c.index);
  c.tenant = h.tenant;
  c.priority = h.priority.value_or(proto::kNoPriority);
  for (proto::Turn& t : c.turns) apply_to_turn(d, h, t);
  for (proto::SubAgent& s : c.subagents) {
    for (proto::Turn& t : s.turns) apply_to_turn(d, h, t);
  }
}

std::unique_ptr<Dataset> with_request_hints(std::unique_ptr<Dataset> inner, const Config& config) {
  if (config.dataset.tenants.empty() && !config.dataset.agent_hints) return inner;
  return std::make_unique<HintedDataset>(std::move(inner), config);
}

}  // namespace convoy::controller
