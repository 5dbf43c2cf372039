#include <doctest/doctest.h>

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
      for (const auto& [w, c] : counts) {
        INFO("workers=" << n << " worker=" << w << " count=" << c);
        CHECK(std::abs(c - expected) / expected < 0.05);
      }
    }
  }
}
