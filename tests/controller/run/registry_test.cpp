// WorkerRegistry: liveness and clock offsets with a hand-advanced clock (no real time passes).
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "controller/run/registry.hpp"
#include "test_time.hpp"

using convoy::controller::clock_sample;
using convoy::controller::ClockSample;
using convoy::controller::kClockPings;
using convoy::controller::kHeartbeatPeriodNs;
using convoy::controller::kMissedHeartbeats;
using convoy::controller::kSpareHandshakes;
using convoy::controller::WorkerRegistry;
using convoy::controller::WorkerState;
namespace proto = convoy::proto;

namespace {

constexpr int64_t kLostAfterNs = kMissedHeartbeats * kHeartbeatPeriodNs;

proto::Hello hello(const std::string& id, uint32_t version = proto::kProtocolVersion) {
  return proto::Hello{version, id, "host-a", 4242};
}

// A pong for a worker whose clock runs `offset_ns` ahead of the controller's, with one-way
// delays `to_ns` (controller -> worker) and `back_ns`, sent by the controller at `t0`. Returns
// the controller receive time through `t3`.
proto::Pong pong_for(int64_t t0, int64_t offset_ns, int64_t to_ns, int64_t back_ns, int64_t* t3) {
  proto::Pong p;
  p.controller_send_ns = t0;
  p.worker_recv_ns = t0 + to_ns + offset_ns;
  p.worker_send_ns = p.worker_recv_ns + 50'000;  // the worker's own processing time
  *t3 = p.worker_send_ns - offset_ns + back_ns;
  return p;
}

// Registers `id` and feeds it kClockPings symmetric pongs starting at `now`; returns the time
// after the last one.
int64_t make_ready(WorkerRegistry& r, const std::string& id, int64_t now) {
  REQUIRE_FALSE(r.on_hello(hello(id), now).has_value());
  for (int i = 0; i < kClockPings; ++i) {
    int64_t t3 = 0;
    proto::Pong p = pong_for(now, 0, kMs, kMs, &t3);
    r.on_pong(id, p, t3);
    now = t3;
  }
  REQUIRE(r.find(id)->state == WorkerState::kReady);
  return now;
}

}  // namespace

TEST_CASE("registry liveness transitions") {
  WorkerRegistry r;
  const int64_t t = 1'000 * kHeartbeatPeriodNs;

  SUBCASE("hello registers a connecting worker with its host and pid") {
    REQUIRE_FALSE(r.on_hello(hello("w1"), t).has_value());
    const auto* w = r.find("w1");
    REQUIRE(w != nullptr);
    CHECK(w->state == WorkerState::kConnecting);
    CHECK(w->host == "host-a");
    CHECK(w->pid == 4242);
    CHECK(w->joined_ns == t);
    CHECK(r.count(WorkerState::kConnecting) == 1);
    CHECK(r.live_count() == 0);  // connecting is not yet live
  }

  SUBCASE("connecting becomes ready on exactly the kClockPings-th pong") {
    REQUIRE_FALSE(r.on_hello(hello("w1"), t).has_value());
    int64_t now = t;
    for (int i = 1; i <= kClockPings; ++i) {
      int64_t t3 = 0;
      proto::Pong p = pong_for(now, 0, kMs, kMs, &t3);
      bool became_ready = r.on_pong("w1", p, t3);
      now = t3;
      CHECK(became_ready == (i == kClockPings));
      CHECK(r.find("w1")->state ==
            (i == kClockPings ? WorkerState::kReady : WorkerState::kConnecting));
    }
    CHECK(r.live_count() == 1);
    // Further pongs (the in-run re-check) never report "became ready" again.
    int64_t t3 = 0;
    proto::Pong p = pong_for(now, 0, kMs, kMs, &t3);
    CHECK_FALSE(r.on_pong("w1", p, t3));
    CHECK(r.find("w1")->state == WorkerState::kReady);
  }

  SUBCASE("a pong or heartbeat from an unknown worker changes nothing") {
    int64_t t3 = 0;
    proto::Pong p = pong_for(t, 0, kMs, kMs, &t3);
    CHECK_FALSE(r.on_pong("ghost", p, t3));
    r.on_heartbeat("ghost", proto::Heartbeat{}, t);
    r.on_seen("ghost", t);
    CHECK(r.find("ghost") == nullptr);
    CHECK(r.workers().empty());
  }

  SUBCASE("lost after kMissedHeartbeats silent periods, not one nanosecond before") {
    int64_t ready_at = make_ready(r, "w1", t);
    CHECK(r.expire(ready_at + kLostAfterNs).empty());
    CHECK(r.find("w1")->state == WorkerState::kReady);
    auto lost = r.expire(ready_at + kLostAfterNs + 1);
    REQUIRE(lost.size() == 1);
    CHECK(lost[0] == "w1");
    CHECK(r.find("w1")->state == WorkerState::kLost);
    CHECK(r.live_count() == 0);
  }

  SUBCASE("a connecting worker that goes silent is forgotten, not lost") {
    // A hello never followed up (a phantom, or a worker that died registering) never ran
    // anything: it must not appear among the run's workers or lost workers.
    REQUIRE_FALSE(r.on_hello(hello("w1"), t).has_value());
    CHECK(r.expire(t + kLostAfterNs).empty());
    CHECK(r.find("w1") != nullptr);
    CHECK(r.expire(t + kLostAfterNs + 1).empty());
    CHECK(r.find("w1") == nullptr);
    CHECK(r.workers().empty());
  }

  SUBCASE("heartbeats keep a worker alive indefinitely and record its load") {
    int64_t now = make_ready(r, "w1", t);
    r.set_state("w1", WorkerState::kRunning);
    for (int i = 0; i < 100; ++i) {
      now += kHeartbeatPeriodNs;
      proto::Heartbeat hb;
      hb.cpu_percent = i == 10 ? 93.5 : 10.0;
      hb.rss_bytes = i == 20 ? (64 << 20) : (8 << 20);
      hb.legacy_open_sessions = i;
      r.on_heartbeat("w1", hb, now);
      CHECK(r.expire(now + kLostAfterNs).empty());
    }
    const auto* w = r.find("w1");
    CHECK(w->state == WorkerState::kRunning);
    CHECK(w->max_cpu_percent == doctest::Approx(93.5));
    CHECK(w->max_rss_bytes == (64 << 20));
    CHECK(w->last_heartbeat.legacy_open_sessions == 99);
  }

  SUBCASE("any message keeps it alive; an older timestamp never rolls liveness back") {
    int64_t now = make_ready(r, "w1", t);
    r.on_seen("w1", now + 2 * kHeartbeatPeriodNs);
    r.on_seen("w1", now);  // reordered: must not move last_seen backwards
    CHECK(r.find("w1")->last_seen_ns == now + 2 * kHeartbeatPeriodNs);
    CHECK(r.expire(now + 2 * kHeartbeatPeriodNs + kLostAfterNs).empty());
  }

  SUBCASE("only the silent worker of several is lost") {
    int64_t now = make_ready(r, "a", t);
    now = make_ready(r, "b", now);
    now = make_ready(r, "c", now);
    for (const char* id : {"a", "b", "c"}) r.on_seen(id, now);
    for (int i = 0; i < 5; ++i) {
      now += kHeartbeatPeriodNs;
      r.on_heartbeat("a", proto::Heartbeat{}, now);
      r.on_heartbeat("c", proto::Heartbeat{}, now);
      auto lost = r.expire(now);
      if (i < 3) CHECK(lost.empty());
      if (i == 3) CHECK(lost == std::vector<std::string>{"b"});
      if (i == 4) CHECK(lost.empty());  // reported once
    }
    CHECK(r.live_count() == 2);
    CHECK(r.count(WorkerState::kLost) == 1);
  }

  SUBCASE("done and lost workers never expire again") {
    int64_t now = make_ready(r, "done", t);
    now = make_ready(r, "gone", now);
    r.set_state("done", WorkerState::kDone);
    REQUIRE(r.expire(now + kLostAfterNs + 1) == std::vector<std::string>{"gone"});
    for (int64_t later : {kLostAfterNs * 2, kLostAfterNs * 100}) {
      CHECK(r.expire(now + later).empty());
    }
    CHECK(r.find("done")->state == WorkerState::kDone);
    CHECK(r.find("gone")->state == WorkerState::kLost);
  }

  SUBCASE("a repeated hello while registered keeps the state and the clock samples") {
    int64_t now = make_ready(r, "w1", t);
    REQUIRE_FALSE(r.on_hello(hello("w1"), now + kMs).has_value());
    CHECK(r.find("w1")->state == WorkerState::kReady);
    CHECK(r.find("w1")->samples.size() == static_cast<size_t>(kClockPings));
    CHECK(r.find("w1")->last_seen_ns == now + kMs);
  }

  SUBCASE("a hello after being lost re-registers from scratch") {
    int64_t now = make_ready(r, "w1", t);
    r.find("w1")->records = 77;
    now += kLostAfterNs + 1;
    REQUIRE(r.expire(now).size() == 1);
    REQUIRE_FALSE(
        r.on_hello(proto::Hello{proto::kProtocolVersion, "w1", "host-b", 99}, now).has_value());
    const auto* w = r.find("w1");
    CHECK(w->state == WorkerState::kConnecting);
    CHECK(w->host == "host-b");
    CHECK(w->pid == 99);
    CHECK(w->samples.empty());
    CHECK_FALSE(w->best.has_value());
    CHECK(w->records == 0);
    CHECK(w->joined_ns == now);
    CHECK(r.expire(now + kLostAfterNs).empty());  // its liveness restarted at the hello
    CHECK(r.workers().size() == 1);
  }
}

TEST_CASE("registry protocol version check") {
  WorkerRegistry r;
  const uint32_t other = proto::kProtocolVersion + 7;
  auto err = r.on_hello(hello("old-worker", other), 1000);
  REQUIRE(err.has_value());
  INFO(err->reason);
  CHECK_FALSE(err->retry);
  CHECK(err->reason.find("old-worker") != std::string::npos);
  CHECK(err->reason.find("version " + std::to_string(other)) != std::string::npos);
  CHECK(err->reason.find("version " + std::to_string(proto::kProtocolVersion)) !=
        std::string::npos);
  CHECK(r.find("old-worker") == nullptr);
  CHECK(r.workers().empty());

  SUBCASE("the same id with the right version is then accepted") {
    CHECK_FALSE(r.on_hello(hello("old-worker"), 2000).has_value());
    CHECK(r.find("old-worker") != nullptr);
  }
}

TEST_CASE("clock offset estimation") {
  SUBCASE("symmetric delays give the exact offset and the round trip minus processing") {
    for (int64_t offset : {int64_t{0}, int64_t{123'456'789}, int64_t{-987'654'321}}) {
      int64_t t3 = 0;
      proto::Pong p = pong_for(5'000'000'000, offset, 2 * kMs, 2 * kMs, &t3);
      ClockSample s = clock_sample(p.controller_send_ns, p.worker_recv_ns, p.worker_send_ns, t3);
      CHECK(s.offset_ns == offset);
      CHECK(s.rtt_ns == 4 * kMs);
    }
  }

  SUBCASE("asymmetric delays err by half the asymmetry") {
    int64_t t3 = 0;
    proto::Pong p = pong_for(0, 1'000'000, 3 * kMs, 1 * kMs, &t3);
    ClockSample s = clock_sample(p.controller_send_ns, p.worker_recv_ns, p.worker_send_ns, t3);
    CHECK(s.rtt_ns == 4 * kMs);
    CHECK(s.offset_ns == 1'000'000 + (3 * kMs - 1 * kMs) / 2);
  }

  SUBCASE("the registry keeps the minimum-round-trip sample's offset") {
    WorkerRegistry r;
    const int64_t true_offset = 250 * kMs;
    REQUIRE_FALSE(r.on_hello(hello("w1"), 0).has_value());
    // Queueing jitter on one leg distorts the offset in proportion; the quietest exchange
    // (index 3: 100 us each way) is the one to trust.
    const int64_t jitter_us[] = {900, 4000, 350, 0, 2500, 1200, 700};
    int64_t now = kMs;
    for (int64_t j : jitter_us) {
      int64_t t3 = 0;
      proto::Pong p = pong_for(now, true_offset, 100'000 + j * 1000, 100'000, &t3);
      r.on_pong("w1", p, t3);
      now = t3 + kMs;
    }
    const auto* w = r.find("w1");
    REQUIRE(w->best.has_value());
    CHECK(w->best->rtt_ns == 200'000);
    CHECK(w->offset_ns() == true_offset);
    CHECK(w->samples.size() == 7);
  }

  SUBCASE("samples are bounded and the estimate follows the retained window") {
    WorkerRegistry r;
    REQUIRE_FALSE(r.on_hello(hello("w1"), 0).has_value());
    int64_t now = kMs;
    // The first exchange is the quietest of all, with offset 1 ms...
    int64_t t3 = 0;
    proto::Pong first = pong_for(now, kMs, 10'000, 10'000, &t3);
    r.on_pong("w1", first, t3);
    CHECK(r.find("w1")->offset_ns() == kMs);
    // ...then the clock is re-checked many times with offset 2 ms and more noise.
    for (int i = 0; i < 4 * kClockPings; ++i) {
      now = t3 + kMs;
      proto::Pong p = pong_for(now, 2 * kMs, 50'000 + i * 1000, 50'000, &t3);
      r.on_pong("w1", p, t3);
    }
    const auto* w = r.find("w1");
    CHECK(w->samples.size() == static_cast<size_t>(2 * kClockPings));
    CHECK(w->best->rtt_ns == 100'000 + (2 * kClockPings) * 1000);
    CHECK(w->offset_ns() == 2 * kMs + (2 * kClockPings * 1000) / 2);
  }

  SUBCASE("an impossible pong (negative round trip) is ignored") {
    WorkerRegistry r;
    REQUIRE_FALSE(r.on_hello(hello("w1"), 0).has_value());
    proto::Pong p{1, 10 * kMs, 11 * kMs, 12 * kMs};
    CHECK_FALSE(r.on_pong("w1", p, 5 * kMs));  // answered before it was sent
    CHECK(r.find("w1")->samples.empty());
    CHECK_FALSE(r.find("w1")->best.has_value());
    CHECK(r.find("w1")->offset_ns() == 0);
  }
}

// Feeds `id` kClockPings pongs at `now` with room for `max_live` live workers; whether it
// became ready.
bool finish_handshake(WorkerRegistry& r, const std::string& id, int64_t now, size_t max_live) {
  bool ready = false;
  for (int i = 0; i < kClockPings; ++i) {
    int64_t t3 = 0;
    const proto::Pong p = pong_for(now, 0, kMs, kMs, &t3);
    ready = r.on_pong(id, p, t3, max_live) || ready;  // answered at t3, after it was sent
    now = t3;
  }
  return ready;
}

TEST_CASE("registry gives a slot only to a worker whose clock check is done") {
  WorkerRegistry r;
  const int64_t t = 1'000 * kHeartbeatPeriodNs;
  int64_t now = make_ready(r, "a", t);
  // Two squatters say hello and never answer a ping: they hold no slot.
  REQUIRE_FALSE(r.on_hello(hello("squat-1"), now, 2).has_value());
  REQUIRE_FALSE(r.on_hello(hello("squat-2"), now, 2).has_value());
  CHECK(r.live_count() == 1);
  REQUIRE_FALSE(r.on_hello(hello("b"), now, 2).has_value());
  CHECK(finish_handshake(r, "b", now + kMs, 2));
  CHECK(r.live_count() == 2);

  SUBCASE("a hello with every slot taken is refused, to retry, and registers nothing") {
    auto err = r.on_hello(hello("late"), now, 2);
    REQUIRE(err.has_value());
    CHECK(err->retry);
    CHECK(err->reason.find("workers.expect") != std::string::npos);
    CHECK(r.find("late") == nullptr);
  }
  SUBCASE("a squatter repeating its hello is dropped when its handshake is overdue") {
    for (int64_t dt = 0; dt <= kLostAfterNs; dt += 100 * kMs) {
      CHECK_FALSE(r.on_hello(hello("squat-1"), now + dt, 2).has_value());
      r.on_seen("a", now + dt);
      r.on_seen("b", now + dt);
    }
    CHECK(r.expire(now + kLostAfterNs).empty());
    CHECK(r.find("squat-1") != nullptr);
    CHECK(r.expire(now + kLostAfterNs + 1).empty());  // forgotten, never lost
    CHECK(r.find("squat-1") == nullptr);
    CHECK(r.find("squat-2") == nullptr);
    CHECK(r.live_count() == 2);
  }
  SUBCASE("a worker done with its handshake when no slot is free stays out") {
    r.set_state("b", WorkerState::kLost);
    REQUIRE_FALSE(r.on_hello(hello("c"), now, 2).has_value());
    REQUIRE_FALSE(r.on_hello(hello("d"), now, 2).has_value());
    CHECK(finish_handshake(r, "c", now + kMs, 2));
    CHECK_FALSE(finish_handshake(r, "d", now + kMs, 2));
    CHECK(r.find("d")->state == WorkerState::kConnecting);
    CHECK(r.find("d")->handshake_done());
    r.forget("d");
    CHECK(r.find("d") == nullptr);
    r.forget("c");  // only a connecting one is forgotten
    CHECK(r.find("c")->state == WorkerState::kReady);
  }
  SUBCASE("peers in their handshake are bounded: max_live + kSpareHandshakes") {
    r.set_state("b", WorkerState::kLost);
    for (size_t i = 2; i < 2 + kSpareHandshakes; ++i) {  // squat-1 and squat-2 are two of them
      REQUIRE_FALSE(r.on_hello(hello("p" + std::to_string(i)), now, 2).has_value());
    }
    auto err = r.on_hello(hello("one-more"), now, 2);
    REQUIRE(err.has_value());
    CHECK(err->retry);
    CHECK(r.find("one-more") == nullptr);
  }
  SUBCASE("a lost worker frees its slot for a late joiner") {
    r.on_seen("b", now + kLostAfterNs);  // b stays alive, a goes silent
    REQUIRE(r.expire(now + kLostAfterNs + 1) == std::vector<std::string>{"a"});
    CHECK(r.live_count() == 1);
    CHECK_FALSE(r.on_hello(hello("c"), now + kLostAfterNs + 2, 2).has_value());
    CHECK(finish_handshake(r, "c", now + kLostAfterNs + 3, 2));
    CHECK(r.on_hello(hello("d"), now + kLostAfterNs + 4, 2).has_value());
    CHECK(r.find("a")->state == WorkerState::kLost);  // still reported
  }
}

TEST_CASE("registry refuses ids and hosts that are not printable UTF-8") {
  WorkerRegistry r;
  for (const std::string& id : {std::string(), std::string("bad\nid"), std::string("\x01"),
                                std::string("w\xff"), std::string(129, 'a')}) {
    auto err = r.on_hello(hello(id), 1);
    REQUIRE_MESSAGE(err.has_value(), id);
    // The message quotes the id escaped: no raw control byte or invalid UTF-8 in it.
    for (unsigned char c : err->reason) CHECK(c >= 0x20);
    CHECK(err->reason.find('\xff') == std::string::npos);
  }
  CHECK(r.on_hello(proto::Hello{proto::kProtocolVersion, "w", "ho\rst", 1}, 1).has_value());
  CHECK(r.workers().empty());
  CHECK_FALSE(r.on_hello(hello("convoy-worker-0.é"), 1).has_value());
  CHECK_FALSE(r.on_hello(hello(std::string(128, 'a')), 1).has_value());
}

TEST_CASE("registry liveness constants come from the Liveness it is given") {
  convoy::controller::Liveness fast;
  fast.heartbeat_period_ns = 20 * kMs;
  fast.missed_heartbeats = 3;
  WorkerRegistry r(fast);
  const int64_t t = make_ready(r, "w1", 1'000 * kHeartbeatPeriodNs);
  CHECK(r.expire(t + 60 * kMs).empty());
  CHECK(r.expire(t + 60 * kMs + 1) == std::vector<std::string>{"w1"});
  SUBCASE("the defaults are what users get") {
    convoy::controller::Liveness d;
    CHECK(d.heartbeat_period_ns == 1'000'000'000);
    CHECK(d.missed_heartbeats == 3);
    CHECK(d.lost_after_ns() == kLostAfterNs);
    CHECK(WorkerRegistry().liveness().lost_after_ns() == kLostAfterNs);
  }
}

TEST_CASE("registry re-checks each worker's clock on its own deadline") {
  convoy::controller::Liveness l;
  l.clock_recheck_ns = 5'000 * kMs;
  WorkerRegistry r(l);
  // Ready at times that fall anywhere in a second: none of them on a multiple of 5 s.
  const int64_t base = 1'000 * kHeartbeatPeriodNs + 1'234 * kMs;
  const int64_t a_ready = make_ready(r, "a", base);
  const int64_t b_ready = make_ready(r, "b", base + 2'700 * kMs);
  SUBCASE("none is due before its re-check period has passed since it became ready") {
    CHECK(r.due_clock_checks(a_ready + 5'000 * kMs - 1).empty());
    CHECK(r.due_clock_checks(a_ready + 5'000 * kMs) == std::vector<std::string>{"a"});
    CHECK(r.due_clock_checks(b_ready + 5'000 * kMs) == std::vector<std::string>{"b"});
  }
  SUBCASE("then every period after the last check, never twice for one deadline") {
    const int64_t first = a_ready + 5'000 * kMs;
    REQUIRE(r.due_clock_checks(first) == std::vector<std::string>{"a"});
    CHECK(r.due_clock_checks(first + 1).empty());
    CHECK(r.due_clock_checks(first + 5'000 * kMs - 1) == std::vector<std::string>{"b"});
    CHECK(r.due_clock_checks(first + 5'000 * kMs) == std::vector<std::string>{"a"});
  }
  SUBCASE("a stalled caller gets one check per worker, not a burst") {
    CHECK(r.due_clock_checks(base + 60'000 * kMs) == std::vector<std::string>{"a", "b"});
    CHECK(r.due_clock_checks(base + 60'000 * kMs + 1).empty());
  }
  SUBCASE("connecting, lost and done workers are not pinged") {
    REQUIRE_FALSE(r.on_hello(hello("c"), base).has_value());
    r.set_state("a", WorkerState::kLost);
    r.set_state("b", WorkerState::kDone);
    CHECK(r.due_clock_checks(base + 60'000 * kMs).empty());
  }
}
