#include "tests/support/test_ca.h"

#include <cstdlib>
#include <utility>

namespace mooncake_tier::testing {

Result<TestCa> TestCa::Make(const std::string& dir) {
  const std::string command = "bash '" MOONCAKE_TIER_SOURCE_DIR
                              "/scripts/make-test-ca.sh' '" +
                              dir + "' --force >/dev/null";
  const int status = std::system(command.c_str());
  if (status != 0) {
    return Status(ErrorReason::kInternal, "scripts/make-test-ca.sh " + dir +
                                              " failed (status " +
                                              std::to_string(status) + ")");
  }
  return TestCa(dir);
}

}  // namespace mooncake_tier::testing
