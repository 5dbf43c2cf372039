// libFuzzer target for the SSE parser (and the reply parser behind it). Beyond "does not crash":
// the input fed whole and the same input fed in pieces at fuzzer-chosen offsets must give the
// same events, which is the parser's central promise.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "worker/reply_parser.hpp"
#include "worker/sse_parser.hpp"

namespace {

using convoy::worker::SseEvent;
using convoy::worker::SseParser;

struct Event {
  std::string type;
  std::string data;
  bool operator==(const Event& o) const { return type == o.type && data == o.data; }
};

std::vector<Event> parse(std::string_view stream, const std::vector<size_t>& cuts) {
  SseParser parser;
  std::vector<Event> events;
  auto sink = [&](const SseEvent& e) {
    events.push_back({std::string(e.type), std::string(e.data)});
    return true;
  };
  size_t from = 0;
  for (const size_t cut : cuts) {
    if (parser.feed(stream.substr(from, cut - from), 1, sink) != SseParser::Status::kOk)
      std::abort();
    from = cut;
  }
  if (parser.feed(stream.substr(from), 1, sink) != SseParser::Status::kOk) std::abort();
  if (parser.finish(2, sink) != SseParser::Status::kOk) std::abort();
  return events;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  // The first two bytes choose the cut points; the rest is the stream.
  const std::string_view stream(reinterpret_cast<const char*>(data + 2), size - 2);
  std::vector<size_t> cuts;
  if (!stream.empty()) {
    const size_t a = data[0] % (stream.size() + 1);
    const size_t b = a + data[1] % (stream.size() - a + 1);
    cuts = {a, b};
  }
  const std::vector<Event> whole = parse(stream, {});
  if (parse(stream, cuts) != whole) std::abort();

  std::string text;
  for (const Event& e : whole) {
    (void)convoy::worker::parse_stream_event(e.data, convoy::worker::Endpoint::kChat, text);
    (void)convoy::worker::parse_stream_event(e.data, convoy::worker::Endpoint::kCompletions, text);
    (void)convoy::worker::parse_stream_event(e.data, convoy::worker::Endpoint::kResponses, text);
    (void)convoy::worker::parse_stream_event(e.data, convoy::worker::Endpoint::kMessages, text);
    (void)convoy::worker::parse_reply_body(e.data, convoy::worker::Endpoint::kResponses, text);
    (void)convoy::worker::parse_reply_body(e.data, convoy::worker::Endpoint::kMessages, text);
    (void)convoy::worker::parse_error_body(e.data);
  }
  return 0;
}
