// load.prefill_concurrency on one worker: PrefillCap over the fake transport. At most `cap`
// requests are between their send and their first token; a first token or an end frees a place
// on the loop's next turn, and the waiting requests go in order; a waiting request cancelled
// ends as cancelled without ever being sent.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "fake_transport.hpp"
#include "worker/event_loop.hpp"
#include "worker/prefill_cap.hpp"

using convoy::worker::EventLoop;
using convoy::worker::HttpRequest;
using convoy::worker::HttpResponse;
using convoy::worker::PrefillCap;
using convoy::worker::Transport;
using convoy::worker::test::FakeTransport;

namespace {

void turn_loop(EventLoop& loop) {
  for (int i = 0; i < 4; ++i) loop.run_once(0);  // deliveries, then the cap's pump
}

}  // namespace

TEST_CASE("prefill cap: at most cap requests wait for a first token, the rest go in order") {
  EventLoop loop;
  auto owned = std::make_unique<FakeTransport>(loop);
  FakeTransport& fake = *owned;
  PrefillCap cap(loop, std::move(owned), 2);
  std::vector<Transport::RequestId> done_ids;
  std::vector<convoy::proto::ErrorKind> kinds;
  std::vector<Transport::RequestId> ids;
  for (int i = 0; i < 5; ++i) {
    HttpRequest req;
    req.url = "http://127.0.0.1:1/" + std::to_string(i);
    const size_t position = ids.size();
    ids.push_back(cap.start(std::move(req), [&, position](HttpResponse&& r) {
      done_ids.push_back(ids[position]);
      kinds.push_back(r.error.kind);
    }));
  }
  REQUIRE(fake.started().size() == 2);
  CHECK(cap.waiting() == 3);
  CHECK(cap.in_flight() == 5);

  // A first token frees a place on the loop's next turn: the third request goes.
  REQUIRE(fake.started()[0].request.on_first_token);
  fake.started()[0].request.on_first_token();
  CHECK(fake.started().size() == 2);  // not from inside the read
  turn_loop(loop);
  REQUIRE(fake.started().size() == 3);
  CHECK(fake.started()[2].request.url == "http://127.0.0.1:1/2");

  // A reply that ends without a first token frees its place at its end.
  CHECK(fake.complete(fake.started()[1].id, FakeTransport::ok()));
  turn_loop(loop);
  REQUIRE(fake.started().size() == 4);
  CHECK(fake.started()[3].request.url == "http://127.0.0.1:1/3");
  CHECK(cap.in_prefill() == 2);

  // The last one, still waiting, is cancelled: it ends cancelled, never sent.
  cap.cancel(ids[4]);
  turn_loop(loop);
  CHECK(fake.started().size() == 4);
  REQUIRE(done_ids.size() == 2);
  CHECK(done_ids[1] == ids[4]);
  CHECK(kinds[1] == convoy::proto::ErrorKind::kCancelled);
  CHECK(cap.waiting() == 0);

  // A first token of a request already done frees nothing twice.
  fake.started()[0].request.on_first_token();
  turn_loop(loop);
  CHECK(cap.in_prefill() == 2);
}
