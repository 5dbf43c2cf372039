// The assigner on its own: a concurrency schedule keeps exactly N conversations in flight, an
// end frees its slot for the next one, load.requests commits turns, and a lost worker's
// conversations are re-homed or lost. Its Assigns go out on a real (private ipc://) socket to a
// worker id no one holds: ZeroMQ's ROUTER drops them, which is all the assigner needs.
#include <doctest/doctest.h>

#include "test_time.hpp"

#include <memory>
#include <zmq.hpp>

#include "controller/config/config.hpp"
#include "controller/dataset/dataset.hpp"
#include "controller/report/run_facts.hpp"
#include "controller/run/assigner.hpp"
#include "controller/run/profile_driver.hpp"
#include "controller/run/worker_plane.hpp"

using convoy::Config;
using convoy::parse_config;
using convoy::controller::Assigner;
using convoy::controller::Liveness;
using convoy::controller::ProfileDriver;
using convoy::controller::ProfileHooks;
using convoy::controller::RunFacts;
using convoy::controller::WorkerPlane;
namespace proto = convoy::proto;

namespace {

struct AssignerBench {
  explicit AssignerBench(const std::string& yaml)
      : config(parse_config(yaml, "c.yaml")),
        plane(
            &context, Liveness{}, [] { return int64_t{0}; }, config, facts),
        profile(config, facts, true),
        assigner(config, convoy::controller::open_dataset(config), plane, facts,
                 [this](const std::string& what) { dataset_error = what; }) {
    plane.open(/*own_workers_only=*/true);
  }
  proto::ConversationEnd end(uint64_t index) {
    proto::ConversationEnd e;
    e.conversation_index = index;
    return e;
  }

  zmq::context_t context{1};
  Config config;
  RunFacts facts;
  WorkerPlane plane;
  ProfileDriver profile;
  Assigner assigner;
  std::string dataset_error;
};

}  // namespace

TEST_CASE("assigner: a concurrency schedule keeps N in flight, and each end starts the next") {
  AssignerBench b("load: {concurrency: 2, sessions: 5}\ndataset: {turns: {mean: 1, stddev: 0}}\n");
  b.assigner.sharder().add_worker("w1");
  const auto total = b.assigner.start_measure(0);
  REQUIRE(total.has_value());
  CHECK(*total == 5);
  b.profile.begin_measure(0, ProfileHooks{b.assigner.scheduler(), nullptr, nullptr, nullptr});
  b.assigner.dispatch(0, proto::Phase::kMeasure, b.profile);
  CHECK(b.assigner.running() == 2);
  CHECK(b.facts.intended_starts_ns.count == 2);
  CHECK_FALSE(b.assigner.on_end("someone-else", b.end(0), kS));  // not the sender's
  CHECK(b.assigner.on_end("w1", b.end(0), kS));
  b.assigner.dispatch(kS, proto::Phase::kMeasure, b.profile);
  CHECK(b.assigner.running() == 2);  // the next one came from the worker's refill window
  for (uint64_t i = 1; i < 5; ++i) {
    b.assigner.on_end("w1", b.end(i), kS + static_cast<int64_t>(i));
    b.assigner.dispatch(kS + static_cast<int64_t>(i), proto::Phase::kMeasure, b.profile);
  }
  CHECK(b.assigner.idle());
  CHECK(b.assigner.exhausted());
  CHECK(b.dataset_error.empty());
}

TEST_CASE("assigner: load.requests commits turns, and the budget is spent only when all end") {
  AssignerBench b("load: {concurrency: 4, requests: 6}\ndataset: {turns: {mean: 2, stddev: 0}}\n");
  b.assigner.sharder().add_worker("w1");
  b.assigner.start_measure(0);
  b.profile.begin_measure(0, ProfileHooks{b.assigner.scheduler(), nullptr, nullptr, nullptr});
  b.assigner.dispatch(0, proto::Phase::kMeasure, b.profile);
  // 2 turns each: 3 conversations commit the 6 requests; no fourth starts.
  CHECK(b.assigner.running() == 3);
  CHECK(b.assigner.budget_limited());
  CHECK(b.assigner.budget_spent());
  CHECK_FALSE(b.assigner.idle());
}

TEST_CASE("assigner: a lost worker's conversations are lost when no survivor can take them") {
  AssignerBench b("load: {concurrency: 3, sessions: 3}\n");
  b.assigner.sharder().add_worker("w1");
  b.assigner.start_measure(0);
  b.profile.begin_measure(0, ProfileHooks{b.assigner.scheduler(), nullptr, nullptr, nullptr});
  b.assigner.dispatch(0, proto::Phase::kMeasure, b.profile);
  REQUIRE(b.assigner.running() == 3);
  const auto lost = b.assigner.on_worker_lost("w1", kS, /*can_rehome=*/true);
  CHECK(lost.in_slot.size() == 3);  // started (intended before the loss): never re-homed
  CHECK(lost.rehomed == 0);
  CHECK(b.assigner.sharder().empty());
  CHECK(b.assigner.idle());
}
