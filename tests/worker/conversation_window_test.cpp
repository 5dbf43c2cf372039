// ConversationWindow: the worker's refill window as pure bookkeeping (no loop, no clock).
#include <doctest/doctest.h>

#include <vector>

#include "worker/conversation_window.hpp"

namespace proto = convoy::proto;
using convoy::worker::ConversationWindow;

// One namespace per test file: the helpers' names stay apart in a unity build.
namespace window_test {

proto::Conversation conversation(uint64_t index) {
  proto::Conversation c;
  c.index = index;
  c.conversation_id = "c" + std::to_string(index);
  return c;
}

void add_all(ConversationWindow& window, std::vector<uint64_t> indices) {
  for (uint64_t index : indices) {
    proto::Conversation c = conversation(index);
    REQUIRE(window.add(c));
  }
}

TEST_CASE("conversation window: refills take the oldest conversation first") {
  ConversationWindow window;
  add_all(window, {4, 7, 9});
  CHECK(window.size() == 3);
  auto first = window.refill();
  REQUIRE(first.has_value());
  CHECK(first->index == 4);
  CHECK(first->conversation_id == "c4");
  CHECK(window.refill()->index == 7);
  CHECK(window.refill()->index == 9);
  CHECK_FALSE(window.refill().has_value());
  CHECK(window.size() == 0);
}

TEST_CASE("conversation window: a start takes the named conversation, once") {
  ConversationWindow window;
  add_all(window, {1, 2, 3});
  auto two = window.take(2);
  REQUIRE(two.has_value());
  CHECK(two->index == 2);
  CHECK_FALSE(window.take(2).has_value());   // already started
  CHECK_FALSE(window.take(42).has_value());  // never here
  CHECK(window.refill()->index == 1);
  CHECK(window.refill()->index == 3);
}

TEST_CASE("conversation window: half used once at most half of its high-water mark is left") {
  ConversationWindow window;
  CHECK(window.half_used());  // empty, never filled
  add_all(window, {1, 2, 3, 4});
  CHECK_FALSE(window.half_used());
  (void)window.refill();  // 3 of 4 left
  CHECK_FALSE(window.half_used());
  (void)window.refill();  // 2 of 4 left
  CHECK(window.half_used());
  add_all(window, {5});  // 3 of a high-water mark of 4
  CHECK_FALSE(window.half_used());
}

TEST_CASE("conversation window: close gives every conversation back and refuses new ones") {
  ConversationWindow window;
  add_all(window, {8, 3, 5});
  CHECK_FALSE(window.closed());
  CHECK(window.close() == std::vector<uint64_t>{8, 3, 5});
  CHECK(window.closed());
  CHECK(window.size() == 0);
  CHECK_FALSE(window.refill().has_value());
  proto::Conversation late = conversation(11);
  CHECK_FALSE(window.add(late));
  CHECK(late.index == 11);  // untouched: the caller gives it back
  CHECK(late.conversation_id == "c11");
  CHECK(window.close().empty());
}

}  // namespace window_test
