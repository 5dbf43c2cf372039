// One-pass decoders for the messages on the hot paths: Record with its RecordError, SessionControl
// and ConversationEnd (the controller's ingest), Conversation with its Turns and SubAgents and
// WindowStart (every assignment a worker receives). msgpack's generic MSGPACK_DEFINE_MAP conversion
// builds a std::map of every key per object before it looks the fields up; these walk the map once.
// The wire format is unchanged, unknown keys are skipped and missing keys keep their defaults,
// exactly as with the generic path.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "proto/messages.hpp"

namespace {

// A member of T's msgpack map: its key and how to read its value into T.
template <typename T>
struct Member {
  std::string_view key;
  void (*read)(const msgpack::object& value, T& into);
};

// NOLINTBEGIN(bugprone-macro-parentheses): `field` is a member name, which cannot be parenthesized.
// clang-format off
#define CONVOY_MEMBER(T, field) \
  Member<T>{#field, [](const msgpack::object& value, T& into) { value.convert(into.field); }}
// clang-format on
// NOLINTEND(bugprone-macro-parentheses)

// Reads every string-keyed member of the map `o` that `members` names into `v`; other keys are
// skipped. The encoder writes the members in the order of MSGPACK_DEFINE_MAP, which is the order
// of `members`, so the member after the last one read is tried first: one key compare per member
// on the usual path (a search of the list otherwise, for another order or an unknown key).
template <typename T, size_t N>
void read_members(const msgpack::object& o, T& v, const std::array<Member<T>, N>& members) {
  if (o.type != msgpack::type::MAP) throw msgpack::type_error();
  size_t next = 0;
  for (uint32_t i = 0; i < o.via.map.size; ++i) {
    const msgpack::object_kv& kv = o.via.map.ptr[i];
    if (kv.key.type != msgpack::type::STR) continue;
    const std::string_view key(kv.key.via.str.ptr, kv.key.via.str.size);
    size_t m = next;
    if (m >= N || members[m].key != key) {
      m = 0;
      while (m < N && members[m].key != key) ++m;
      if (m == N) continue;
    }
    members[m].read(kv.val, v);
    next = m + 1;
  }
}

using convoy::proto::Conversation;
using convoy::proto::ConversationEnd;
using convoy::proto::Record;
using convoy::proto::RecordError;
using convoy::proto::SessionControl;
using convoy::proto::SubAgent;
using convoy::proto::Turn;
using convoy::proto::WindowStart;

// In MSGPACK_DEFINE_MAP's order (proto/messages.hpp). A member missing here arrives as its
// default: tests/proto/record_codec_test.cpp checks every one against the generic decoder.
constexpr std::array kRecordMembers = {
    CONVOY_MEMBER(Record, x_request_id),
    CONVOY_MEMBER(Record, x_correlation_id),
    CONVOY_MEMBER(Record, conversation_id),
    CONVOY_MEMBER(Record, conversation_index),
    CONVOY_MEMBER(Record, turn_index),
    CONVOY_MEMBER(Record, final_turn),
    CONVOY_MEMBER(Record, phase),
    CONVOY_MEMBER(Record, intended_ns),
    CONVOY_MEMBER(Record, sent_ns),
    CONVOY_MEMBER(Record, first_byte_ns),
    CONVOY_MEMBER(Record, first_token_ns),
    CONVOY_MEMBER(Record, second_token_ns),
    CONVOY_MEMBER(Record, last_token_ns),
    CONVOY_MEMBER(Record, end_ns),
    CONVOY_MEMBER(Record, chunk_gaps_ns),
    CONVOY_MEMBER(Record, input_tokens),
    CONVOY_MEMBER(Record, output_tokens),
    CONVOY_MEMBER(Record, cached_tokens),
    CONVOY_MEMBER(Record, usage_from_server),
    CONVOY_MEMBER(Record, http_status),
    CONVOY_MEMBER(Record, error),
    CONVOY_MEMBER(Record, session_control),
    CONVOY_MEMBER(Record, subagent),
    CONVOY_MEMBER(Record, url_index),
    CONVOY_MEMBER(Record, served_by),
    CONVOY_MEMBER(Record, dp_rank),
    CONVOY_MEMBER(Record, close_request),
    CONVOY_MEMBER(Record, reasoning_tokens),
    CONVOY_MEMBER(Record, first_output_token_ns),
    CONVOY_MEMBER(Record, early_release),
    CONVOY_MEMBER(Record, server_timing),
    CONVOY_MEMBER(Record, tenant),
    CONVOY_MEMBER(Record, priority),
};

constexpr std::array kRecordErrorMembers = {
    CONVOY_MEMBER(RecordError, kind),
    CONVOY_MEMBER(RecordError, code),
    CONVOY_MEMBER(RecordError, type),
    CONVOY_MEMBER(RecordError, message),
};

constexpr std::array kSessionControlMembers = {
    CONVOY_MEMBER(SessionControl, session_id),
    CONVOY_MEMBER(SessionControl, action),
    CONVOY_MEMBER(SessionControl, timeout_s),
    CONVOY_MEMBER(SessionControl, other_keys),
};

constexpr std::array kConversationEndMembers = {
    CONVOY_MEMBER(ConversationEnd, conversation_index),
    CONVOY_MEMBER(ConversationEnd, reason),
    CONVOY_MEMBER(ConversationEnd, refilled_by),
    CONVOY_MEMBER(ConversationEnd, sessions_opened),
    CONVOY_MEMBER(ConversationEnd, sessions_left_open),
};

constexpr std::array kWindowStartMembers = {
    CONVOY_MEMBER(WindowStart, conversation_index),
    CONVOY_MEMBER(WindowStart, start_ns),
};

constexpr std::array kTurnMembers = {
    CONVOY_MEMBER(Turn, user_text),      CONVOY_MEMBER(Turn, messages_json),
    CONVOY_MEMBER(Turn, max_tokens),     CONVOY_MEMBER(Turn, input_tokens_est),
    CONVOY_MEMBER(Turn, delay_ms),       CONVOY_MEMBER(Turn, extra_json),
    CONVOY_MEMBER(Turn, recorded_reply),
};

constexpr std::array kConversationMembers = {
    CONVOY_MEMBER(Conversation, index),          CONVOY_MEMBER(Conversation, conversation_id),
    CONVOY_MEMBER(Conversation, correlation_id), CONVOY_MEMBER(Conversation, phase),
    CONVOY_MEMBER(Conversation, start_ns),       CONVOY_MEMBER(Conversation, first_turn),
    CONVOY_MEMBER(Conversation, system_prompt),  CONVOY_MEMBER(Conversation, turns),
    CONVOY_MEMBER(Conversation, subagents),      CONVOY_MEMBER(Conversation, url_index),
    CONVOY_MEMBER(Conversation, tenant),         CONVOY_MEMBER(Conversation, priority),
    CONVOY_MEMBER(Conversation, model),          CONVOY_MEMBER(Conversation, fan_in),
};

constexpr std::array kSubAgentMembers = {
    CONVOY_MEMBER(SubAgent, conversation_id), CONVOY_MEMBER(SubAgent, correlation_id),
    CONVOY_MEMBER(SubAgent, parent),          CONVOY_MEMBER(SubAgent, spawn_after_turn),
    CONVOY_MEMBER(SubAgent, system_prompt),   CONVOY_MEMBER(SubAgent, turns),
};

#undef CONVOY_MEMBER

}  // namespace

namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
  namespace adaptor {

  msgpack::object const& convert<Record>::operator()(msgpack::object const& o, Record& v) const {
    read_members(o, v, kRecordMembers);
    return o;
  }

  msgpack::object const& convert<RecordError>::operator()(msgpack::object const& o,
                                                          RecordError& v) const {
    read_members(o, v, kRecordErrorMembers);
    return o;
  }

  msgpack::object const& convert<SessionControl>::operator()(msgpack::object const& o,
                                                             SessionControl& v) const {
    read_members(o, v, kSessionControlMembers);
    return o;
  }

  msgpack::object const& convert<ConversationEnd>::operator()(msgpack::object const& o,
                                                              ConversationEnd& v) const {
    read_members(o, v, kConversationEndMembers);
    return o;
  }

  msgpack::object const& convert<WindowStart>::operator()(msgpack::object const& o,
                                                          WindowStart& v) const {
    read_members(o, v, kWindowStartMembers);
    return o;
  }

  msgpack::object const& convert<Turn>::operator()(msgpack::object const& o, Turn& v) const {
    read_members(o, v, kTurnMembers);  // recorded_reply and the rest
    return o;
  }

  msgpack::object const& convert<Conversation>::operator()(msgpack::object const& o,
                                                           Conversation& v) const {
    read_members(o, v, kConversationMembers);  // turns and subagents through the decoders here
    return o;
  }

  msgpack::object const& convert<SubAgent>::operator()(msgpack::object const& o,
                                                       SubAgent& v) const {
    read_members(o, v, kSubAgentMembers);
    return o;
  }

  }  // namespace adaptor
}  // MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS)
}  // namespace msgpack
