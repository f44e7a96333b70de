#pragma once

// A throwaway certificate authority for tests of the TLS planes: runs
// scripts/make-test-ca.sh into a directory and names its files. The CA and
// every leaf are valid for a day; leaves of master and node are usable as
// server and client and list localhost, 127.0.0.1 and ::1.

#include <string>

#include "mooncake_tier/status.h"

namespace mooncake_tier::testing {

class TestCa {
 public:
  // Makes the CA and its leaves in `dir` (created if missing; replaced if
  // it holds one). INTERNAL when the script fails (its output goes to
  // stderr).
  static Result<TestCa> Make(const std::string& dir);

  // "<dir>/ca.pem".
  std::string ca() const { return dir_ + "/ca.pem"; }
  // "<dir>/<role>.pem" and "<dir>/<role>.key" for role master, node,
  // client or admin.
  std::string cert(const std::string& role) const {
    return dir_ + "/" + role + ".pem";
  }
  std::string key(const std::string& role) const {
    return dir_ + "/" + role + ".key";
  }
  const std::string& dir() const { return dir_; }

 private:
  explicit TestCa(std::string dir) : dir_(std::move(dir)) {}
  std::string dir_;
};

}  // namespace mooncake_tier::testing
