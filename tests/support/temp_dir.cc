#include "tests/support/temp_dir.h"

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <system_error>

namespace mooncake_tier::testing {

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern =
      std::string(base && *base ? base : "/tmp") + "/mooncake-tier-test-XXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a temporary directory");
  }
  path_ = pattern;
}

TempDir::~TempDir() {
  const char* keep = std::getenv("MOONCAKE_TIER_KEEP_TEMP");
  if (keep && *keep) {
    std::fprintf(stderr, "[temp] kept %s\n", path_.c_str());
    return;
  }
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace mooncake_tier::testing
