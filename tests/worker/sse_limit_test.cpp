// SseParser's line and event limit lowered to target.max_response_bytes: a stream that never
// ends a line, or an event of many data lines, stops at the limit and the parser's buffers
// never hold more than it.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "worker/sse_parser.hpp"

using convoy::worker::SseEvent;
using convoy::worker::SseParser;

namespace {

struct Events {
  std::vector<std::string> data;
  bool operator()(const SseEvent& e) {
    data.emplace_back(e.data);
    return true;
  }
};

constexpr size_t kLimit = 1024;

}  // namespace

TEST_CASE("sse: a lowered limit refuses a line that grows past it, read by read") {
  SseParser parser;
  parser.set_max_event_bytes(kLimit);
  CHECK(parser.max_event_bytes() == kLimit);
  Events events;
  REQUIRE(parser.feed("data: ok\n\n", 1, events) == SseParser::Status::kOk);
  REQUIRE(events.data.size() == 1);
  SseParser::Status status = parser.feed("data: ", 2, events);
  int reads = 0;
  for (; reads < 100 && status == SseParser::Status::kOk; ++reads) {
    status = parser.feed(std::string(100, 'x'), 3, events);
    CHECK(parser.buffered_bytes() <= 2 * kLimit);  // line and event buffers, each capped
  }
  CHECK(status == SseParser::Status::kOverflow);
  CHECK(reads <= 11);  // stopped at the read that crossed 1024 bytes, not later
  CHECK(parser.feed("\n\n", 4, events) == SseParser::Status::kOverflow);
  CHECK(events.data.size() == 1);
}

TEST_CASE("sse: a lowered limit refuses an event of many data lines past it") {
  SseParser parser;
  parser.set_max_event_bytes(kLimit);
  Events events;
  SseParser::Status status = SseParser::Status::kOk;
  int lines = 0;
  for (; lines < 100 && status == SseParser::Status::kOk; ++lines) {
    status = parser.feed("data: " + std::string(100, 'y') + "\n", 1, events);
  }
  CHECK(status == SseParser::Status::kOverflow);
  CHECK(lines <= 11);
  CHECK(parser.buffered_bytes() <= 2 * kLimit);
  CHECK(events.data.empty());
}

TEST_CASE("sse: a limit above the 16 MiB ceiling keeps the ceiling") {
  SseParser parser;
  parser.set_max_event_bytes(SseParser::kMaxEventBytes * 4);
  CHECK(parser.max_event_bytes() == SseParser::kMaxEventBytes);
}

TEST_CASE("sse: an event exactly at a lowered limit is delivered") {
  SseParser parser;
  parser.set_max_event_bytes(kLimit);
  Events events;
  // The line "data: " + value must fit too; the event buffer holds the value.
  const std::string value(kLimit - 6, 'z');
  CHECK(parser.feed("data: " + value + "\n\n", 1, events) == SseParser::Status::kOk);
  REQUIRE(events.data.size() == 1);
  CHECK(events.data[0] == value);
}
