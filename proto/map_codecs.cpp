// One-pass decoders for the messages on the hot paths: Record (the controller's ingest) and
// Conversation with its Turns and SubAgents (every assignment a worker receives). msgpack's generic
// MSGPACK_DEFINE_MAP conversion builds a std::map of every key per object before it looks the
// fields up; these walk the map once. The wire format is unchanged, unknown keys are skipped
// and missing keys keep their defaults, exactly as with the generic path.
#include <string_view>

#include "proto/messages.hpp"

namespace {

// Calls field(key, value) for every string-keyed member of the map `o`.
template <typename Field>
void for_each_member(const msgpack::object& o, Field&& field) {
  if (o.type != msgpack::type::MAP) throw msgpack::type_error();
  for (uint32_t i = 0; i < o.via.map.size; ++i) {
    const msgpack::object_kv& kv = o.via.map.ptr[i];
    if (kv.key.type != msgpack::type::STR) continue;
    field(std::string_view(kv.key.via.str.ptr, kv.key.via.str.size), kv.val);
  }
}

}  // namespace

namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
  namespace adaptor {

  msgpack::object const& convert<convoy::proto::Record>::operator()(
      msgpack::object const& o, convoy::proto::Record& v) const {
    // 27 short compares per field at most: cheaper than any lookup structure.
    for_each_member(o, [&v](std::string_view key, const msgpack::object& val) {
      if (key == "x_request_id")
        val.convert(v.x_request_id);
      else if (key == "x_correlation_id")
        val.convert(v.x_correlation_id);
      else if (key == "conversation_id")
        val.convert(v.conversation_id);
      else if (key == "conversation_index")
        val.convert(v.conversation_index);
      else if (key == "turn_index")
        val.convert(v.turn_index);
      else if (key == "final_turn")
        val.convert(v.final_turn);
      else if (key == "phase")
        val.convert(v.phase);
      else if (key == "intended_ns")
        val.convert(v.intended_ns);
      else if (key == "sent_ns")
        val.convert(v.sent_ns);
      else if (key == "first_byte_ns")
        val.convert(v.first_byte_ns);
      else if (key == "first_token_ns")
        val.convert(v.first_token_ns);
      else if (key == "second_token_ns")
        val.convert(v.second_token_ns);
      else if (key == "last_token_ns")
        val.convert(v.last_token_ns);
      else if (key == "end_ns")
        val.convert(v.end_ns);
      else if (key == "chunk_gaps_ns")
        val.convert(v.chunk_gaps_ns);
      else if (key == "input_tokens")
        val.convert(v.input_tokens);
      else if (key == "output_tokens")
        val.convert(v.output_tokens);
      else if (key == "cached_tokens")
        val.convert(v.cached_tokens);
      else if (key == "usage_from_server")
        val.convert(v.usage_from_server);
      else if (key == "http_status")
        val.convert(v.http_status);
      else if (key == "error")
        val.convert(v.error);
      else if (key == "session_control")
        val.convert(v.session_control);
      else if (key == "subagent")
        val.convert(v.subagent);
      else if (key == "url_index")
        val.convert(v.url_index);
      else if (key == "served_by")
        val.convert(v.served_by);
      else if (key == "dp_rank")
        val.convert(v.dp_rank);
      else if (key == "close_request")
        val.convert(v.close_request);
      else if (key == "reasoning_tokens")
        val.convert(v.reasoning_tokens);
      else if (key == "first_output_token_ns")
        val.convert(v.first_output_token_ns);
    });
    return o;
  }

  msgpack::object const& convert<convoy::proto::Turn>::operator()(msgpack::object const& o,
                                                                  convoy::proto::Turn& v) const {
    for_each_member(o, [&v](std::string_view key, const msgpack::object& val) {
      if (key == "user_text")
        val.convert(v.user_text);
      else if (key == "messages_json")
        val.convert(v.messages_json);
      else if (key == "max_tokens")
        val.convert(v.max_tokens);
      else if (key == "input_tokens_est")
        val.convert(v.input_tokens_est);
      else if (key == "delay_ms")
        val.convert(v.delay_ms);
      else if (key == "extra_json")
        val.convert(v.extra_json);
      else if (key == "recorded_reply")
        val.convert(v.recorded_reply);
    });
    return o;
  }

  msgpack::object const& convert<convoy::proto::Conversation>::operator()(
      msgpack::object const& o, convoy::proto::Conversation& v) const {
    for_each_member(o, [&v](std::string_view key, const msgpack::object& val) {
      if (key == "index")
        val.convert(v.index);
      else if (key == "conversation_id")
        val.convert(v.conversation_id);
      else if (key == "correlation_id")
        val.convert(v.correlation_id);
      else if (key == "phase")
        val.convert(v.phase);
      else if (key == "start_ns")
        val.convert(v.start_ns);
      else if (key == "first_turn")
        val.convert(v.first_turn);
      else if (key == "system_prompt")
        val.convert(v.system_prompt);
      else if (key == "turns")
        val.convert(v.turns);  // a vector of Turn: each through the decoder above
      else if (key == "subagents")
        val.convert(v.subagents);  // a vector of SubAgent: each through the decoder below
      else if (key == "url_index")
        val.convert(v.url_index);
    });
    return o;
  }

  msgpack::object const& convert<convoy::proto::SubAgent>::operator()(
      msgpack::object const& o, convoy::proto::SubAgent& v) const {
    for_each_member(o, [&v](std::string_view key, const msgpack::object& val) {
      if (key == "conversation_id")
        val.convert(v.conversation_id);
      else if (key == "correlation_id")
        val.convert(v.correlation_id);
      else if (key == "parent")
        val.convert(v.parent);
      else if (key == "spawn_after_turn")
        val.convert(v.spawn_after_turn);
      else if (key == "system_prompt")
        val.convert(v.system_prompt);
      else if (key == "turns")
        val.convert(v.turns);
    });
    return o;
  }

  }  // namespace adaptor
}  // MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS)
}  // namespace msgpack
