#include "worker/sse_parser.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using convoy::worker::SseEvent;
using convoy::worker::SseParser;

namespace {

// A chat stream as vLLM/Dynamo send it: role chunk, content chunks, a keep-alive comment, a
// finish chunk, the usage chunk ("choices": []) and [DONE].
const std::string kChatStream =
    "data: "
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
    "\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\",\"},\"finish_reason\":null}]}\n\n"
    ": keep-alive\n\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" world\"},\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"},\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" How\"},\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" are\"},\"finish_reason\":null}]}\n\n"
    "id: 7\nretry: 1000\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\" you\"},\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"?\"},\"finish_reason\":null}]}\n\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
    "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "event: message\n"
    "data: "
    "{\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\","
    "\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":9,\"total_tokens\":21,"
    "\"prompt_tokens_details\":{\"cached_tokens\":8}}}\n\n"
    "data: [DONE]\n\n";

struct Seen {
  std::string type;
  std::string data;
  int64_t recv_ns;
  bool operator==(const Seen& o) const { return type == o.type && data == o.data; }
};

struct Collector {
  std::vector<Seen> events;
  bool operator()(const SseEvent& e) {
    events.push_back({std::string(e.type), std::string(e.data), e.recv_ns});
    return true;
  }
};

std::vector<Seen> parse_pieces(const std::string& stream, const std::vector<size_t>& cuts) {
  SseParser parser;
  Collector c;
  size_t from = 0;
  int64_t t = 0;
  for (const size_t cut : cuts) {
    REQUIRE(parser.feed(std::string_view(stream).substr(from, cut - from), ++t, c) ==
            SseParser::Status::kOk);
    from = cut;
  }
  REQUIRE(parser.feed(std::string_view(stream).substr(from), ++t, c) == SseParser::Status::kOk);
  return c.events;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

}  // namespace

TEST_CASE("sse: a recorded chat stream parses into its events") {
  const auto events = parse_pieces(kChatStream, {});
  REQUIRE(events.size() == 12);
  CHECK(events[1].data.find("\"Hello\"") != std::string::npos);
  CHECK(events[10].type == "message");
  CHECK(events[10].data.find("\"usage\"") != std::string::npos);
  CHECK(events[11].data == "[DONE]");
  for (const auto& e : events) CHECK(e.recv_ns == 1);
}

TEST_CASE("sse: splitting a stream anywhere gives the same events") {
  for (const char* ending : {"\n", "\r\n", "\r"}) {
    CAPTURE(std::string(ending) == "\n" ? "LF" : std::string(ending) == "\r" ? "CR" : "CRLF");
    const std::string stream = replace_all(kChatStream, "\n", ending);
    const auto whole = parse_pieces(stream, {});
    REQUIRE(whole.size() == 12);
    SUBCASE("two pieces at every byte offset") {
      for (size_t i = 0; i <= stream.size(); ++i) {
        CAPTURE(i);
        REQUIRE(parse_pieces(stream, {i}) == whole);
      }
    }
    SUBCASE("three pieces at many offset pairs") {
      for (size_t i = 0; i <= stream.size(); i += 7) {
        for (size_t j = i; j <= stream.size(); j += 5) {
          CAPTURE(i);
          CAPTURE(j);
          REQUIRE(parse_pieces(stream, {i, j}) == whole);
        }
      }
    }
    SUBCASE("one byte per read") {
      std::vector<size_t> cuts;
      for (size_t i = 1; i < stream.size(); ++i) cuts.push_back(i);
      REQUIRE(parse_pieces(stream, cuts) == whole);
    }
  }
}

TEST_CASE("sse: line endings") {
  SUBCASE("CR at the end of a read and LF at the start of the next are one line ending") {
    // Were they two, the blank line would end the event after "a" early and split it.
    const auto events = parse_pieces("data: a\r\ndata: b\r\n\r\n", {8});
    REQUIRE(events.size() == 1);
    CHECK(events[0].data == "a\nb");
  }
  SUBCASE("mixed endings in one stream") {
    const auto events = parse_pieces("data: 1\r\rdata: 2\n\ndata: 3\r\n\r\n", {});
    REQUIRE(events.size() == 3);
    CHECK(events[0].data == "1");
    CHECK(events[1].data == "2");
    CHECK(events[2].data == "3");
  }
}

TEST_CASE("sse: fields") {
  SUBCASE("comments and keep-alives are not events") {
    SseParser parser;
    Collector c;
    parser.feed(": ping\n\n:\n\n: another\n", 1, c);
    CHECK(c.events.empty());
    CHECK(parser.comments() == 3);
  }
  SUBCASE("multi-line data joins with LF") {
    const auto events = parse_pieces("data: line one\ndata: line two\ndata:\n\n", {});
    REQUIRE(events.size() == 1);
    CHECK(events[0].data == "line one\nline two\n");
  }
  SUBCASE("event: error keeps its type, also without data") {
    const auto events =
        parse_pieces("event: error\ndata: {\"message\":\"boom\"}\n\nevent: error\n\n", {});
    REQUIRE(events.size() == 2);
    CHECK(events[0].type == "error");
    CHECK(events[0].data == "{\"message\":\"boom\"}");
    CHECK(events[1].type == "error");
    CHECK(events[1].data.empty());
  }
  SUBCASE("the type resets after each event") {
    const auto events = parse_pieces("event: x\ndata: 1\n\ndata: 2\n\n", {});
    REQUIRE(events.size() == 2);
    CHECK(events[0].type == "x");
    CHECK(events[1].type.empty());
  }
  SUBCASE("one leading space is stripped, no more; a field without colon has no value") {
    const auto events = parse_pieces("data:x\n\ndata:  y\n\ndata\n\n", {});
    REQUIRE(events.size() == 3);
    CHECK(events[0].data == "x");
    CHECK(events[1].data == " y");
    CHECK(events[2].data.empty());
  }
  SUBCASE("id, retry and unknown fields are ignored") {
    const auto events = parse_pieces("id: 1\nretry: 5\nfoo: bar\n\ndata: z\nid: 2\n\n", {});
    REQUIRE(events.size() == 1);
    CHECK(events[0].data == "z");
  }
}

TEST_CASE("sse: timestamps and control") {
  SUBCASE("an event is stamped with the read that completed it") {
    SseParser parser;
    Collector c;
    parser.feed("data: a", 100, c);
    parser.feed("bc\n", 200, c);
    CHECK(c.events.empty());
    parser.feed("\ndata: d\n\ndata: e\n\n", 300, c);
    REQUIRE(c.events.size() == 3);
    CHECK(c.events[0].data == "abc");
    CHECK(c.events[0].recv_ns == 300);
    CHECK(c.events[2].recv_ns == 300);
    CHECK(parser.events() == 3);
  }
  SUBCASE("a sink returning false stops the read") {
    SseParser parser;
    int calls = 0;
    const auto status = parser.feed("data: 1\n\ndata: 2\n\n", 1, [&](const SseEvent&) {
      ++calls;
      return false;
    });
    CHECK(status == SseParser::Status::kStopped);
    CHECK(calls == 1);
  }
  SUBCASE("finish delivers an unterminated last event") {
    for (const char* tail : {"data: [DONE]", "data: [DONE]\n", "data: [DONE]\r"}) {
      SseParser parser;
      Collector c;
      parser.feed(tail, 1, c);
      CHECK(c.events.empty());
      CHECK(parser.finish(2, c) == SseParser::Status::kOk);
      REQUIRE(c.events.size() == 1);
      CHECK(c.events[0].data == "[DONE]");
      CHECK(c.events[0].recv_ns == 2);
    }
  }
  SUBCASE("an event larger than the limit is refused") {
    SseParser parser;
    Collector c;
    const std::string big(SseParser::kMaxEventBytes / 2 + 1, 'x');
    CHECK(parser.feed("data: " + big + "\n", 1, c) == SseParser::Status::kOk);
    CHECK(parser.feed("data: " + big + "\n", 1, c) == SseParser::Status::kOverflow);
    CHECK(parser.feed("data: ok\n\n", 1, c) == SseParser::Status::kOverflow);
    CHECK(c.events.empty());
  }
}
