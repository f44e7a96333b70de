#pragma once

// The behaviour every Client implementation must have, written once against
// the public interface. An implementation's test binary compiles
// client_conformance.cc and instantiates the suite with factories:
//
//   INSTANTIATE_TEST_SUITE_P(Embedded, ClientConformanceTest,
//                            ::testing::Values(&MakeEmbeddedEnv));

#include <gtest/gtest.h>

#include <functional>
#include <memory>

#include "mooncake_tier/client.h"

namespace mooncake_tier::testing {

// A running store with clients, as one implementation provides it.
class ClientEnv {
 public:
  virtual ~ClientEnv() = default;
  virtual Client& client() = 0;
  virtual std::unique_ptr<Client> NewClient() = 0;
  // Bytes of DRAM the store has in total.
  virtual uint64_t dram_bytes() const = 0;
};

using ClientEnvFactory = std::unique_ptr<ClientEnv> (*)();

class ClientConformanceTest
    : public ::testing::TestWithParam<ClientEnvFactory> {
 protected:
  void SetUp() override { env_ = GetParam()(); }
  Client& client() { return env_->client(); }
  std::unique_ptr<ClientEnv> env_;
};

// Bytes with a pattern that depends on `seed`, for equality checks.
std::vector<std::byte> Pattern(size_t size, uint32_t seed);

}  // namespace mooncake_tier::testing
