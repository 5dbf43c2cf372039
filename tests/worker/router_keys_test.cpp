// Other routers' session keys on the worker: each write valued from its source, the family's
// data-parallel rank, and body fields set along their paths.
#include <doctest/doctest.h>
#include <rapidjson/document.h>

#include <string>

#include "worker/session_routing.hpp"

using namespace convoy::worker;
using convoy::proto::RoutingSource;
using convoy::proto::RoutingWrite;

TEST_CASE("router keys: each write takes its source's value") {
  SessionRoutingSettings s;
  s.dp_ranks = 4;
  s.writes = {RoutingWrite{true, "X-SMG-Routing-Key", RoutingSource::kSession},
              RoutingWrite{true, "X-Up", RoutingSource::kParent},
              RoutingWrite{false, "meta.root", RoutingSource::kRoot},
              RoutingWrite{false, "meta.frontend", RoutingSource::kUrlIndex},
              RoutingWrite{true, "X-data-parallel-rank", RoutingSource::kDpRank}};
  SessionOverlay child;
  add_routing_writes(child, s, {"kid", "lead", "lead", 2});
  REQUIRE(child.key_headers.size() == 3);
  CHECK(child.key_headers[0].second == "kid");
  CHECK(child.key_headers[1].second == "lead");
  const std::string rank = std::to_string(family_dp_rank("lead", 4));
  CHECK(child.key_headers[2].second == rank);
  REQUIRE(child.key_body.size() == 2);
  CHECK(child.key_body[0].value == "lead");
  CHECK(child.key_body[1].number);
  // The keys are not Dynamo's session: no open or close is counted for them.
  CHECK_FALSE(child.may_open_session());
  CHECK_FALSE(child.ends_session());

  SUBCASE("a lead has no parent: nothing is written for it") {
    SessionOverlay lead;
    add_routing_writes(lead, s, {"lead", "", "lead", 0});
    CHECK(lead.key_headers.size() == 2);
    CHECK(lead.key_headers[1].second == rank);  // the family's rank, the same as its child's
  }
  SUBCASE("the rank is within dp_ranks and depends only on the root") {
    for (const char* root : {"a", "b", "c", "d", "e"}) {
      CHECK(family_dp_rank(root, 4) >= 0);
      CHECK(family_dp_rank(root, 4) < 4);
      CHECK(family_dp_rank(root, 4) == family_dp_rank(root, 4));
    }
    CHECK(family_dp_rank("a", 0) == 0);
  }
  SUBCASE("body fields are set along their paths, replacing what is in the way") {
    rapidjson::Document body;
    body.Parse(R"({"model":"m","meta":"x","session_id":"old"})");
    set_body_fields(
        body, {{"session_id", "s1", false}, {"meta.frontend", "2", true}, {"a.b.c", "v", false}});
    CHECK(std::string(body["session_id"].GetString()) == "s1");
    CHECK(body["meta"]["frontend"].GetInt64() == 2);
    CHECK(std::string(body["a"]["b"]["c"].GetString()) == "v");
    CHECK(std::string(body["model"].GetString()) == "m");
  }
}
