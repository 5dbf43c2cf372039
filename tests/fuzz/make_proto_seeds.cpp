// Writes one encoded message of each type into a folder: the seed corpus of proto_fuzz
// (tests/fuzz/corpus/proto). Run: make_proto_seeds tests/fuzz/corpus/proto
#include <fstream>
#include <iostream>
#include <string>

#include "proto/envelope.hpp"

using namespace convoy::proto;

namespace {

void write(const std::string& dir, const std::string& name, const std::string& bytes) {
  std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_proto_seeds DIR\n";
    return 2;
  }
  const std::string dir = argv[1];
  write(dir, "hello", encode(Hello{kProtocolVersion, "worker-0", "host-a", 4242}));
  Welcome welcome;
  welcome.run_id = "run-1";
  welcome.results_endpoint = "tcp://127.0.0.1:5556";
  welcome.settings.url = "http://127.0.0.1:8000";
  welcome.settings.headers = {{"X-A", "1"}};
  welcome.settings.endpoint = Endpoint::kCompletions;  // protocol 3: the settings enums
  welcome.settings.session_routing.mode = SessionRoutingMode::kLegacy;
  welcome.settings.history = HistoryMode::kRecorded;
  // protocol 4: several urls, the header-era session settings
  welcome.settings.urls = {"http://127.0.0.1:8001", "http://127.0.0.1:8002"};
  welcome.settings.session_routing.final_marker = FinalMarker::kCloseRequest;
  welcome.settings.session_routing.verify = true;
  welcome.token = "00112233445566778899aabbccddeeff";
  write(dir, "welcome", encode(welcome));
  write(dir, "reject", encode(Reject{"protocol version mismatch"}));
  write(dir, "ping", encode(Ping{3, 123456789}));
  write(dir, "pong", encode(Pong{3, 123456789, 5, 6}));
  write(dir, "heartbeat", encode(Heartbeat{1, 2, 3, 4, 12.5, 1 << 20}));
  Conversation c;
  c.index = 7;
  c.conversation_id = "conv-7";
  c.correlation_id = "c0ffee00-0000-4000-8000-000000000007";
  c.start_ns = 1000;
  c.system_prompt = "be brief";
  c.turns = {Turn{"hello", "", 16, 2, 0, R"({"nvext":{}})", ""},
             Turn{"again", R"([{"role":"user","content":"x"}])", 8, 2, 50, "", "reply"}};
  Assign assign{1, {c, c}};
  write(dir, "assign", encode(assign));
  // protocol 4: a family (a sub-agent, and a sub-agent of it) pinned to its url
  Conversation family = c;
  family.url_index = 1;
  SubAgent child;
  child.conversation_id = "conv-7-sub-0";
  child.correlation_id = "c0ffee00-0000-4000-8000-000000000107";
  child.parent = -1;
  child.spawn_after_turn = 1;
  child.system_prompt = "you are a sub-agent";
  child.turns = {Turn{"look this up", "", 8, 3, 0, "", ""}};
  SubAgent grandchild = child;
  grandchild.conversation_id = "conv-7-sub-1";
  grandchild.correlation_id = "c0ffee00-0000-4000-8000-000000000207";
  grandchild.parent = 0;
  family.subagents = {child, grandchild};
  write(dir, "assign_family", encode(Assign{2, {family, c}}));
  write(dir, "stop", encode(Stop{true}));
  Record r;
  r.x_request_id = "req-1";
  r.x_correlation_id = c.correlation_id;
  r.conversation_index = 7;
  r.chunk_gaps_ns = {10, 20};
  r.error = {ErrorKind::kHttpStatus, 400, "Bad Request", "bad"};
  r.session_control = {"x", convoy::proto::SessionAction::kBind, 300, {{"priority", "2"}}};
  Record sub = r;  // protocol 4: a sub-agent's close request, with the serving worker
  sub.subagent = 1;
  sub.url_index = 1;
  sub.served_by = "7587890000000000001";
  sub.dp_rank = 3;
  sub.close_request = true;
  Results results;
  results.worker_id = "worker-0";
  results.token = welcome.token;
  results.records = {r, sub};
  results.ended = {ConversationEnd{7, EndReason::kCompleted}};
  results.failed = {FailedConversation{8, "undecodable assignment: str size overflow"}};
  results.undecodable = {UndecodableAssign{2, {1}, -1, "not a conversation"}};
  write(dir, "results", encode(results));
  write(dir, "bye", encode(Bye{"worker-0", welcome.token, "done", 0}));
  return 0;
}
