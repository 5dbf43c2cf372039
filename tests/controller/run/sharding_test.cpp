#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <string>

#include "controller/run/sharding.hpp"

using convoy::controller::Sharder;

namespace {
std::string id_of(int i) { return "conv-" + std::to_string(i) + "-correlation"; }

Sharder make(int n) {
  Sharder s;
  for (int i = 0; i < n; ++i) s.add_worker("w" + std::to_string(i));
  return s;
}
}  // namespace

TEST_CASE("rendezvous sharding") {
  SUBCASE("no workers gives an empty id") { CHECK(Sharder{}.pick("x").empty()); }

  SUBCASE("the same id always maps to the same worker, whatever the insertion order") {
    Sharder a = make(5);
    Sharder b;
    for (int i = 4; i >= 0; --i) b.add_worker("w" + std::to_string(i));
    for (int i = 0; i < 2000; ++i) {
      CHECK(a.pick(id_of(i)) == a.pick(id_of(i)));
      CHECK(a.pick(id_of(i)) == b.pick(id_of(i)));
    }
  }

  SUBCASE("removing a worker moves only that worker's ids") {
    Sharder s = make(4);
    std::map<std::string, std::string> before;
    for (int i = 0; i < 10000; ++i) before[id_of(i)] = s.pick(id_of(i));
    s.remove_worker("w2");
    int moved = 0;
    for (const auto& [id, owner] : before) {
      const std::string& now = s.pick(id);
      if (owner == "w2") {
        CHECK(now != "w2");
        ++moved;
      } else {
        CHECK(now == owner);
      }
    }
    CHECK(moved > 0);
  }

  SUBCASE("adding a worker only takes ids for itself") {
    Sharder s = make(3);
    std::map<std::string, std::string> before;
    for (int i = 0; i < 5000; ++i) before[id_of(i)] = s.pick(id_of(i));
    s.add_worker("w9");
    for (const auto& [id, owner] : before) {
      const std::string& now = s.pick(id);
      CHECK((now == owner || now == "w9"));
    }
  }

  SUBCASE("balance over 10,000 ids is within a few percent") {
    for (int n : {2, 3, 4, 7}) {
      Sharder s = make(n);
      std::map<std::string, int> counts;
      const int kIds = 10000;
      for (int i = 0; i < kIds; ++i) counts[s.pick(id_of(i))]++;
      CHECK(counts.size() == static_cast<size_t>(n));
      double expected = static_cast<double>(kIds) / n;
      for (const auto& entry : counts) {
        // Not a structured binding: INFO captures it in a lambda (clang 14 cannot).
        const std::string& w = entry.first;
        const int c = entry.second;
        INFO("workers=" << n << " worker=" << w << " count=" << c);
        CHECK(std::abs(c - expected) / expected < 0.05);
      }
    }
  }
}

// --- target.urls ---------------------------------------------------------------------------------

TEST_CASE("pick_url pins a family to one URL by rendezvous hash of its root id") {
  using convoy::controller::pick_url;
  SUBCASE("no URLs or one: always 0") {
    CHECK(pick_url("x", 0) == 0);
    CHECK(pick_url("x", 1) == 0);
  }
  SUBCASE("in range, and the same for the same id whatever runs it") {
    for (int i = 0; i < 2000; ++i) {
      const uint32_t url = pick_url(id_of(i), 3);
      CHECK(url < 3);
      CHECK(pick_url(id_of(i), 3) == url);
    }
  }
  SUBCASE("the URL does not follow the worker: each worker's families spread over every URL") {
    // Same hash, other domain: were the URL picked like the worker, worker 0 of 2 would get
    // only URL 0's families.
    Sharder s = make(2);
    std::map<std::string, std::map<uint32_t, int>> counts;
    for (int i = 0; i < 4000; ++i) counts[s.pick(id_of(i))][pick_url(id_of(i), 2)]++;
    for (const auto& [worker, urls] : counts) {
      INFO("worker=" << worker);
      REQUIRE(urls.size() == 2);
      const double share = urls.at(0) / static_cast<double>(urls.at(0) + urls.at(1));
      CHECK(share > 0.45);
      CHECK(share < 0.55);
    }
  }
  SUBCASE("adding a URL only moves families onto the new one") {
    for (int i = 0; i < 5000; ++i) {
      const uint32_t before = pick_url(id_of(i), 3);
      const uint32_t after = pick_url(id_of(i), 4);
      CHECK((after == before || after == 3));
    }
  }
  SUBCASE("balance over 10,000 ids is within a few percent") {
    for (size_t n : {2u, 3u, 5u}) {
      std::map<uint32_t, int> counts;
      const int kIds = 10000;
      for (int i = 0; i < kIds; ++i) counts[pick_url(id_of(i), n)]++;
      CHECK(counts.size() == n);
      const double expected = static_cast<double>(kIds) / static_cast<double>(n);
      for (const auto& [url, c] : counts) {
        INFO("urls=" << n << " url=" << url << " count=" << c);
        CHECK(std::abs(c - expected) / expected < 0.05);
      }
    }
  }
  SUBCASE("the picks are pinned (which frontend a family uses is part of a run's identity)") {
    std::string picks;
    for (int i = 0; i < 16; ++i) picks += std::to_string(pick_url("conv-" + std::to_string(i), 3));
    CHECK(picks == "0211002210102221");
  }
}
