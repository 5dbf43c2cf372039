// SSE parsing throughput on one core, in-process: a captured chat stream (or a generated one
// shaped like vLLM's) is fed to SseParser the way the worker receives it, and the events/s are
// printed. Usage: sse_parse_bench [CAPTURED_STREAM_FILE] [--seconds S]
//
// Three figures: the SSE grammar alone with one read per event (how tokens arrive when a
// server streams), the same with 16 KiB reads (a loaded client draining a socket), and the full
// per-event path of the worker (SSE + RapidJSON extraction of content and usage).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "worker/reply_parser.hpp"
#include "worker/sse_parser.hpp"

namespace {

using convoy::worker::SseEvent;
using convoy::worker::SseParser;
using Clock = std::chrono::steady_clock;

std::string chunk(const std::string& content) {
  return "data: {\"id\":\"chatcmpl-8f0c1b2e\",\"object\":\"chat.completion.chunk\",\"created\":"
         "1718000000,\"model\":\"meta-llama/Llama-3.1-8B-Instruct\",\"choices\":[{\"index\":0,"
         "\"delta\":{\"content\":\"" +
         content + "\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n";
}

// One 256-token reply, as a server sends it.
std::string generated_stream() {
  static const char* const kWords[] = {" the", " model", " streams", " tokens",  ",",
                                       " and", " each",  " one",     " arrives", " as",
                                       " an",  " event", "."};
  std::string s =
      "data: {\"id\":\"chatcmpl-8f0c1b2e\",\"object\":\"chat.completion.chunk\",\"choices\":[{"
      "\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n";
  for (int i = 0; i < 256; ++i) s += chunk(kWords[i % 13]);
  s += "data: {\"id\":\"chatcmpl-8f0c1b2e\",\"choices\":[],\"usage\":{\"prompt_tokens\":512,"
       "\"completion_tokens\":256,\"prompt_tokens_details\":{\"cached_tokens\":384}}}\n\n";
  s += "data: [DONE]\n\n";
  return s;
}

// Splits the stream after each blank line: one read per event.
std::vector<std::string_view> per_event_reads(const std::string& s) {
  std::vector<std::string_view> reads;
  size_t from = 0;
  for (size_t pos; (pos = s.find("\n\n", from)) != std::string::npos; from = pos + 2) {
    reads.emplace_back(s.data() + from, pos + 2 - from);
  }
  if (from < s.size()) reads.emplace_back(s.data() + from, s.size() - from);
  return reads;
}

std::vector<std::string_view> fixed_reads(const std::string& s, size_t size) {
  std::vector<std::string_view> reads;
  for (size_t from = 0; from < s.size(); from += size) {
    reads.emplace_back(s.data() + from, std::min(size, s.size() - from));
  }
  return reads;
}

struct Result {
  double events_per_s;
  double mb_per_s;
};

template <class OnEvent>
Result measure(const std::vector<std::string_view>& reads, double seconds, OnEvent on_event) {
  size_t bytes_per_pass = 0;
  for (auto r : reads) bytes_per_pass += r.size();
  uint64_t events = 0;
  uint64_t passes = 0;
  const auto start = Clock::now();
  const auto until = start + std::chrono::duration<double>(seconds);
  SseParser parser;
  int64_t t = 0;
  auto sink = [&](const SseEvent& e) {
    ++events;
    on_event(e);
    return true;
  };
  while (Clock::now() < until) {
    for (int k = 0; k < 16; ++k, ++passes) {
      for (auto r : reads) parser.feed(r, ++t, sink);
    }
  }
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  return {static_cast<double>(events) / elapsed,
          static_cast<double>(bytes_per_pass * passes) / elapsed / 1e6};
}

}  // namespace

int main(int argc, char** argv) {
  std::string stream;
  double seconds = 2.0;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::stod(argv[++i]);
    } else {
      std::ifstream in(argv[i], std::ios::binary);
      if (!in) {
        std::fprintf(stderr, "sse_parse_bench: cannot read %s\n", argv[i]);
        return 2;
      }
      std::ostringstream all;
      all << in.rdbuf();
      stream = all.str();
    }
  }
  if (stream.empty()) stream = generated_stream();

  std::printf("stream: %zu bytes, %zu events\n", stream.size(), per_event_reads(stream).size());
  const auto per_event = measure(per_event_reads(stream), seconds, [](const SseEvent&) {});
  std::printf("sse only, one read per event : %12.0f events/s  %8.1f MB/s\n",
              per_event.events_per_s, per_event.mb_per_s);
  const auto big_reads = measure(fixed_reads(stream, 16384), seconds, [](const SseEvent&) {});
  std::printf("sse only, 16 KiB reads       : %12.0f events/s  %8.1f MB/s\n",
              big_reads.events_per_s, big_reads.mb_per_s);
  std::string text;
  const auto full = measure(per_event_reads(stream), seconds, [&](const SseEvent& e) {
    if (e.data != "[DONE]") {
      (void)convoy::worker::parse_stream_event(e.data, convoy::worker::Endpoint::kChat, text);
    }
    if (text.size() > (1u << 20)) text.clear();
  });
  std::printf("sse + content/usage JSON     : %12.0f events/s  %8.1f MB/s\n", full.events_per_s,
              full.mb_per_s);
  return 0;
}
