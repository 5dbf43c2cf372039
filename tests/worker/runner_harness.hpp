// The ConversationRunner test harness: a runner on the real EventLoop with a FakeTransport, and
// everything its sink received. Shared by the runner's test files.
#pragma once

#include <rapidjson/document.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "test_time.hpp"
#include "worker/conversation_runner.hpp"
#include "worker/fake_transport.hpp"

namespace convoy::worker::test {

inline proto::WorkerSettings settings() {
  proto::WorkerSettings s;
  s.url = "http://127.0.0.1:9";  // never reached: the transport is a fake
  s.model = "m";
  s.api_key_env.clear();
  s.seed = 42;
  return s;
}

inline proto::Conversation conversation(uint64_t index, int turns, int64_t start_ns = 0) {
  proto::Conversation c;
  c.index = index;
  c.conversation_id = "conv-" + std::to_string(index);
  c.correlation_id = "corr-" + std::to_string(index);
  c.start_ns = start_ns;
  for (int k = 0; k < turns; ++k) {
    proto::Turn t;
    t.user_text = "user " + std::to_string(k);
    t.recorded_reply = "recorded " + std::to_string(k);
    c.turns.push_back(t);
  }
  return c;
}

// A runner, its fake transport and loop, and everything its sink received.
struct Harness {
  explicit Harness(proto::WorkerSettings s = settings())
      : runner(loop, http, std::move(s), "w-test",
               RunnerSink{[this](proto::Record&& r) { records.push_back(std::move(r)); },
                          [this](const proto::ConversationEnd& e) { ends.push_back(e); }}) {}

  // Runs the loop until `done` or 2 s pass; whether `done` held.
  bool run_until(const std::function<bool()>& done) {
    const int64_t deadline = steady_now_ns() + 2000 * kMs;
    while (!done() && steady_now_ns() < deadline) loop.run_once(10 * kMs);
    return done();
  }
  bool run_until_started(size_t n) {
    return run_until([&] { return http.started().size() >= n; });
  }
  bool run_until_ends(size_t n) {
    return run_until([&] { return ends.size() >= n; });
  }
  // The chat messages of the n-th request's body.
  std::vector<std::pair<std::string, std::string>> messages(size_t n) const {
    rapidjson::Document body;
    body.Parse(http.started().at(n).request.body.c_str());
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& m : body["messages"].GetArray()) {
      out.emplace_back(m["role"].GetString(), m["content"].GetString());
    }
    return out;
  }

  EventLoop loop;
  FakeTransport http{loop};
  std::vector<proto::Record> records;
  std::vector<proto::ConversationEnd> ends;
  ConversationRunner runner;
};

}  // namespace convoy::worker::test
