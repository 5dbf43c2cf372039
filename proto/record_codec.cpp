#include <cstring>
#include <string_view>

#include "proto/messages.hpp"

namespace msgpack {
MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS) {
  namespace adaptor {

  msgpack::object const& convert<convoy::proto::Record>::operator()(
      msgpack::object const& o, convoy::proto::Record& v) const {
    if (o.type != msgpack::type::MAP) throw msgpack::type_error();
    for (uint32_t i = 0; i < o.via.map.size; ++i) {
      const msgpack::object_kv& kv = o.via.map.ptr[i];
      if (kv.key.type != msgpack::type::STR) continue;
      const std::string_view key(kv.key.via.str.ptr, kv.key.via.str.size);
      const msgpack::object& val = kv.val;
      // Most frequent first is not worth it: 22 short compares per field are cheap.
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
    }
    return o;
  }

  }  // namespace adaptor
}  // MSGPACK_API_VERSION_NAMESPACE(MSGPACK_DEFAULT_API_NS)
}  // namespace msgpack
