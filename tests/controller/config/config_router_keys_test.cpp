// session_routing.mode's other routers (sglang_gateway, sglang_session, vllm_dp_rank, custom),
// session_routing.custom and dp_ranks: what each writes, and the errors for two modes writing
// one place.
#include <doctest/doctest.h>

#include "controller/config_test_util.hpp"

#include <string>

#include "controller/config/config.hpp"

using convoy::Config;
using convoy::parse_config;
using convoy::proto::RouterPreset;
using convoy::proto::RoutingSource;
using convoy::proto::SessionRoutingMode;

TEST_CASE("session_routing.mode lists other routers, each writing its own key") {
  const Config c = parse_config(
      "session_routing:\n  mode: [bind, sglang_gateway, sglang_session, vllm_dp_rank]\n"
      "  dp_ranks: 4\n",
      "c.yaml");
  const auto& r = c.session_routing;
  CHECK(r.mode == SessionRoutingMode::kBind);
  REQUIRE(r.presets.size() == 3);
  CHECK(r.presets[2] == RouterPreset::kVllmDpRank);
  CHECK(r.dp_ranks == 4);
  REQUIRE(r.writes.size() == 3);
  CHECK(r.writes[0].header);
  CHECK(r.writes[0].name == "X-SMG-Routing-Key");
  CHECK(r.writes[0].source == RoutingSource::kSession);
  CHECK_FALSE(r.writes[1].header);
  CHECK(r.writes[1].name == "session_id");
  CHECK(r.writes[2].name == "X-data-parallel-rank");
  CHECK(r.writes[2].source == RoutingSource::kDpRank);

  SUBCASE("one name still reads as before, and a preset alone leaves Dynamo's mode off") {
    CHECK(parse_config("session_routing: {mode: header}\n", "c.yaml").session_routing.mode ==
          SessionRoutingMode::kHeader);
    const Config g = parse_config("session_routing: {mode: sglang_gateway}\n", "c.yaml");
    CHECK(g.session_routing.mode == SessionRoutingMode::kOff);
    CHECK(g.session_routing.writes.size() == 1);
  }
  SUBCASE("custom writes its headers and body paths from their sources") {
    const Config k = parse_config(
        "session_routing:\n  mode: custom\n  custom:\n    headers: {X-Route: root, X-Up: parent}\n"
        "    body: {metadata.frontend: url_index}\n",
        "c.yaml");
    const auto& w = k.session_routing.writes;
    REQUIRE(w.size() == 3);
    CHECK(w[0].name == "X-Route");
    CHECK(w[0].source == RoutingSource::kRoot);
    CHECK(w[1].source == RoutingSource::kParent);
    CHECK(w[2].name == "metadata.frontend");
    CHECK(w[2].source == RoutingSource::kUrlIndex);
  }
  SUBCASE("the resolved config reads back the same") {
    const Config again = parse_config(convoy::to_yaml(c), "again.yaml");
    CHECK(again.session_routing.presets == r.presets);
    CHECK(again.session_routing.writes.size() == 3);
    CHECK(again.session_routing.dp_ranks == 4);
  }
}

TEST_CASE("session_routing: two modes writing one place, and other bad input, name the key") {
  CHECK_ERROR(
      "session_routing:\n  mode: [sglang_gateway, custom]\n  custom:\n    headers: "
      "{x-smg-routing-key: root}\n",
      "c.yaml:4: session_routing.custom.headers.x-smg-routing-key: custom and "
      "sglang_gateway both write the header x-smg-routing-key");
  CHECK_ERROR(
      "session_routing:\n  mode: [header, custom]\n  custom:\n    headers: "
      "{X-Dynamo-Session-ID: session}\n",
      "custom and mode header both write the header X-Dynamo-Session-ID");
  CHECK_ERROR(
      "session_routing:\n  mode: [bind, custom]\n  custom:\n    body: "
      "{nvext.session_control.id: session}\n",
      "custom and mode bind both write the body path nvext.session_control.id");
  CHECK_ERROR(
      "session_routing:\n  mode: [sglang_session, custom]\n  custom:\n    body: "
      "{session_id: root}\n",
      "both write the body path session_id");
  CHECK_ERROR("session_routing:\n  mode: [bind, header]\n",
              "c.yaml:2: session_routing.mode: at most one of Dynamo's modes");
  CHECK_ERROR("session_routing:\n  mode: [off, sglang_gateway]\n", "off only alone");
  CHECK_ERROR("session_routing:\n  mode: [sglang_gateway, sglang_gateway]\n", "listed twice");
  CHECK_ERROR("session_routing:\n  mode: sglang_gatway\n", "session_routing.mode: expected one of");
  CHECK_ERROR("session_routing:\n  mode: vllm_dp_rank\n",
              "session_routing.dp_ranks: mode vllm_dp_rank needs the server's data-parallel size");
  CHECK_ERROR("session_routing:\n  dp_ranks: 2\n",
              "session_routing.dp_ranks: read only with mode vllm_dp_rank");
  CHECK_ERROR("session_routing:\n  mode: custom\n",
              "session_routing.custom: mode custom needs at least one entry");
  CHECK_ERROR("session_routing:\n  custom: {headers: {X-A: session}}\n",
              "session_routing.custom: read only with mode custom");
  CHECK_ERROR("session_routing:\n  mode: custom\n  custom: {headers: {X-A: worker}}\n",
              "session_routing.custom.headers.X-A: expected a SOURCE: session, parent, root or "
              "url_index");
  CHECK_ERROR("session_routing:\n  mode: custom\n  custom: {body: {model: session}}\n",
              "session_routing.custom.body.model: 'model' is a member convoy writes itself");
  CHECK_ERROR("session_routing:\n  mode: custom\n  custom: {body: {a..b: session}}\n",
              "an empty key in 'a..b'");
  CHECK_ERROR("session_routing:\n  mode: custom\n  custom: {headers: {\"X A\": session}}\n",
              "not a valid HTTP header name");
}
