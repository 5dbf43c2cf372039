// InFlight: the book of assigned conversations, with a recording Send (no sockets).
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "controller/dataset/jsonl_reader.hpp"
#include "controller/run/in_flight.hpp"

using convoy::controller::InFlight;
using convoy::controller::RequestBudget;
namespace proto = convoy::proto;

namespace {

proto::Conversation in_flight_conversation(uint64_t index, size_t turns, std::string text = "hi") {
  proto::Conversation c;
  c.index = index;
  c.correlation_id = "c" + std::to_string(index);
  for (size_t t = 0; t < turns; ++t) {
    proto::Turn turn;
    turn.user_text = text;
    c.turns.push_back(turn);
  }
  return c;
}

// Sends nothing: numbers each worker's batches and keeps what went out.
struct InFlightSent {
  std::vector<std::pair<std::string, std::vector<uint64_t>>> batches;  // worker, indexes
  std::map<std::string, uint64_t> numbers;
  InFlight::Send send() {
    return [this](const std::string& worker, proto::Assign& msg) {
      msg.batch = ++numbers[worker];
      std::vector<uint64_t> indexes;
      for (const auto& c : msg.conversations) indexes.push_back(c.index);
      batches.emplace_back(worker, indexes);
    };
  }
};

}  // namespace

TEST_CASE("in flight: batches go out per worker and are split before they outgrow the limit") {
  InFlightSent sent;
  const uint64_t one = convoy::controller::wire_bytes_bound(in_flight_conversation(0, 1, "x"));
  InFlight book(2 * one + one / 2);  // room for two
  for (uint64_t i = 0; i < 5; ++i)
    book.queue("w1", in_flight_conversation(i, 1, "x"), 100, sent.send());
  book.queue("w2", in_flight_conversation(9, 1, "x"), 100, sent.send());
  book.flush(sent.send());
  using B = std::pair<std::string, std::vector<uint64_t>>;
  CHECK(sent.batches == std::vector<B>{{"w1", {0, 1}}, {"w1", {2, 3}}, {"w1", {4}}, {"w2", {9}}});
  CHECK(book.size() == 6);
}

TEST_CASE("in flight: an undecodable report names conversations by batch and position") {
  InFlightSent sent;
  InFlight book(1 << 20);
  for (uint64_t i = 0; i < 4; ++i) book.queue("w1", in_flight_conversation(i, 1), 100, sent.send());
  book.flush(sent.send());
  for (uint64_t i = 4; i < 6; ++i) book.queue("w1", in_flight_conversation(i, 1), 100, sent.send());
  book.flush(sent.send());
  auto sorted = [](std::vector<uint64_t> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK(sorted(book.undecodable("w1", {1, {1, 3}, -1, "bad"})) == std::vector<uint64_t>{1, 3});
  CHECK(sorted(book.undecodable("w1", {1, {}, 2, "cut"})) == std::vector<uint64_t>{2, 3});
  CHECK(sorted(book.undecodable("w1", {2, {0}, -1, "bad"})) == std::vector<uint64_t>{4});
  CHECK(book.undecodable("w2", {1, {0}, -1, "not its batch"}).empty());
}

TEST_CASE("in flight: a conversation ends only for the worker that holds it") {
  InFlightSent sent;
  InFlight book(1 << 20);
  RequestBudget unlimited;
  book.queue("w1", in_flight_conversation(7, 2), 100, sent.send());
  CHECK_FALSE(book.end("w2", 7, unlimited));
  CHECK_FALSE(book.end("w1", 8, unlimited));
  CHECK(book.end("w1", 7, unlimited));
  CHECK(book.empty());
  CHECK_FALSE(book.end("w1", 7, unlimited));  // twice: already ended
}

TEST_CASE("in flight: load.requests grants are cut to fit and given back when unsent") {
  InFlight book(1 << 20);
  RequestBudget budget(5);
  proto::Conversation a = in_flight_conversation(1, 3);
  proto::Conversation b = in_flight_conversation(2, 3);
  book.apply_grant(a, budget);
  book.apply_grant(b, budget);
  CHECK(a.turns.size() == 3);
  CHECK(b.turns.size() == 2);  // cut: 3 + 2 = the 5 allowed
  CHECK(budget.used());
  SUBCASE("a warmup conversation is never cut and commits nothing") {
    proto::Conversation w = in_flight_conversation(3, 4);
    w.phase = proto::Phase::kWarmup;
    book.apply_grant(w, budget);
    CHECK(w.turns.size() == 4);
  }
  SUBCASE("ended after one of three sent: two come back") {
    InFlightSent sent;
    book.queue("w1", a, 100, sent.send());
    proto::Record r;
    r.conversation_index = 1;
    r.phase = proto::Phase::kMeasure;
    book.on_record(r);
    REQUIRE(book.end("w1", 1, budget));
    CHECK(budget.remaining() == 2);
  }
  SUBCASE("ended having sent nothing: nothing comes back") {
    InFlightSent sent;
    book.queue("w1", a, 100, sent.send());
    REQUIRE(book.end("w1", 1, budget));
    CHECK(budget.remaining() == 0);
  }
  SUBCASE("a re-homed conversation keeps the grant it had") {
    proto::Conversation again = in_flight_conversation(2, 3);
    book.apply_grant(again, budget);
    CHECK(again.turns.size() == 2);
    CHECK(budget.committed() == 5);
  }
}

TEST_CASE("in flight: a lost worker's conversations are taken out, re-homed or lost") {
  InFlightSent sent;
  InFlight book(1 << 20);
  book.queue("lost", in_flight_conversation(1, 1), 100, sent.send());  // due by now
  book.queue("lost", in_flight_conversation(2, 1), 900, sent.send());  // not yet due
  book.queue("lost", in_flight_conversation(3, 1), 900, sent.send());  // not yet due, but started
  book.queue("other", in_flight_conversation(4, 1), 900, sent.send());
  proto::Record r;
  r.conversation_index = 3;
  book.on_record(r);
  auto taken = book.take_worker(
      "lost", [](const InFlight::Entry& e) { return !e.started && e.intended_ns > 500; });
  REQUIRE(taken.rehome.size() == 1);
  CHECK(taken.rehome[0].first == 2);
  CHECK(taken.rehome[0].second.intended_ns == 900);
  std::sort(taken.lost.begin(), taken.lost.end());
  CHECK(taken.lost == std::vector<uint64_t>{1, 3});
  CHECK(book.indexes() == std::vector<uint64_t>{4});
}

TEST_CASE("in flight: load.requests counts a family's sub-agent turns and cuts the family to fit") {
  auto subagent = [](int32_t parent, uint32_t after, size_t turns) {
    proto::SubAgent s;
    s.parent = parent;
    s.spawn_after_turn = after;
    s.correlation_id = "s" + std::to_string(parent) + "-" + std::to_string(after);
    s.turns.resize(turns);
    return s;
  };
  // Lead: 3 turns. Sub-agents: #0 (2 turns) after the lead's turn 1, #1 (2) after #0's turn 1,
  // #2 (2) after the lead's turn 3.
  auto family = [&](uint64_t index) {
    proto::Conversation c = in_flight_conversation(index, 3);
    c.subagents = {subagent(-1, 1, 2), subagent(0, 1, 2), subagent(-1, 3, 2)};
    return c;
  };
  SUBCASE("a whole family commits all of its turns") {
    InFlight book(1 << 20);
    RequestBudget budget(100);
    proto::Conversation c = family(1);
    book.apply_grant(c, budget);
    CHECK(budget.committed() == 9);
    CHECK(c.subagents.size() == 3);
  }
  SUBCASE("a short grant keeps the lead, then sub-agents in order, renumbering parents") {
    InFlight book(1 << 20);
    RequestBudget budget(6);
    proto::Conversation c = family(1);
    book.apply_grant(c, budget);
    CHECK(budget.committed() == 6);
    CHECK(c.turns.size() == 3);
    REQUIRE(c.subagents.size() == 2);  // #0 whole, #1 cut to one turn, #2 dropped
    CHECK(c.subagents[0].turns.size() == 2);
    CHECK(c.subagents[1].parent == 0);
    CHECK(c.subagents[1].turns.size() == 1);
  }
  SUBCASE("a sub-agent whose parent lost the turn it spawns after is dropped") {
    InFlight book(1 << 20);
    RequestBudget budget(7);  // lead 3, #0 2, #1 2: #2 spawns after the lead's turn 3, kept
    proto::Conversation c = family(1);
    c.subagents[1].spawn_after_turn = 3;  // #0 has only 2 turns
    book.apply_grant(c, budget);
    REQUIRE(c.subagents.size() == 2);  // #1 dropped; #2 (after the lead's turn 3) kept
    CHECK(c.subagents[1].spawn_after_turn == 3);
    CHECK(c.subagents[1].parent == -1);
  }
  SUBCASE("a grant no larger than the lead's turns leaves no sub-agent") {
    InFlight book(1 << 20);
    RequestBudget budget(2);
    proto::Conversation c = family(1);
    book.apply_grant(c, budget);
    CHECK(c.turns.size() == 2);
    CHECK(c.subagents.empty());  // both turns go to the lead: nothing is left for sub-agents
  }
  SUBCASE("a close request is not one of the granted turns") {
    InFlight book(1 << 20);
    RequestBudget budget(3);
    proto::Conversation c = in_flight_conversation(1, 3);
    book.apply_grant(c, budget);
    InFlightSent sent;
    book.queue("w1", c, 100, sent.send());
    proto::Record r;
    r.conversation_index = 1;
    r.phase = proto::Phase::kMeasure;
    book.on_record(r);  // turn 0
    r.close_request = true;
    book.on_record(r);  // the close request: not a turn
    REQUIRE(book.end("w1", 1, budget));
    CHECK(budget.remaining() == 2);  // one of the three turns was sent: two come back
  }
}
