#pragma once

// A fresh directory under $TMPDIR (or /tmp), removed with its contents when
// the object goes away, unless MOONCAKE_TIER_KEEP_TEMP is set (non-empty):
// then it stays, and its path is printed, for the processes' logs in it.

#include <filesystem>
#include <string>

namespace mooncake_tier::testing {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace mooncake_tier::testing
