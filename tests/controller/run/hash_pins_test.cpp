// The controller's hashed choices, pinned: which worker a correlation id shards to, the dataset's
// derived seeds and first draws, and JSONL id hashes must be the same in every release.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "controller/dataset/jsonl_reader.hpp"
#include "controller/dataset/rng.hpp"
#include "controller/run/sharding.hpp"

namespace convoy::controller {
namespace {

TEST_CASE("sharding hashes and picks are pinned") {
  CHECK(stable_hash("conv-1") == 0x6255d454b01994c2ULL);
  CHECK(stable_hash("worker-0") == 0x6c9d67f7d40111edULL);
  CHECK(rendezvous_weight(stable_hash("conv-1"), stable_hash("worker-0")) == 0x4d7cf50df03ad45aULL);
  Sharder sharder;
  for (const char* w : {"w0", "w1", "w2"}) sharder.add_worker(w);
  std::string picks;
  for (int i = 0; i < 12; ++i) picks += sharder.pick("conv-" + std::to_string(i)).substr(1);
  CHECK(picks == "012102210221");
}

TEST_CASE("dataset seeds and draws are pinned") {
  CHECK(derive_seed(42, 7, Stream::kShape) == 0xd00dfb2735e57681ULL);
  Rng rng(42, 7, Stream::kShape);
  CHECK(rng.next_u64() == 0x20b12038c8779b4cULL);
}

TEST_CASE("jsonl id hashes are pinned") { CHECK(hash_id("conv-1").b == 0x23bbd2287cd74e42ULL); }

}  // namespace
}  // namespace convoy::controller
