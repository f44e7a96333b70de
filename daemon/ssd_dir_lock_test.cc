#include "daemon/ssd_dir_lock.h"

#include <unistd.h>

#include <filesystem>

#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace mooncake_tier::daemon {
namespace ssd_dir_lock_test {
namespace {

TEST(SsdDirLockTest, CreatesTheDirectoryAndExcludesASecondHolder) {
  testing::TempDir dir;
  const std::string ssd = dir.path() + "/a/b";
  Result<std::unique_ptr<SsdDirLock>> first = SsdDirLock::Acquire(ssd);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(std::filesystem::is_directory(ssd));
  // flock locks belong to the open file: a second open is refused even in
  // the same process, as another process would be.
  Result<std::unique_ptr<SsdDirLock>> second = SsdDirLock::Acquire(ssd);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().reason(), ErrorReason::kUnavailable);
  EXPECT_NE(second.status().message().find(std::to_string(getpid())),
            std::string::npos)
      << second.status().message();
  first->reset();
  EXPECT_TRUE(SsdDirLock::Acquire(ssd).ok());
}

TEST(SsdDirLockTest, UnusableDirectoryIsAnError) {
  Result<std::unique_ptr<SsdDirLock>> lock =
      SsdDirLock::Acquire("/proc/mooncake-tier-cannot-exist");
  ASSERT_FALSE(lock.ok());
  EXPECT_EQ(lock.status().reason(), ErrorReason::kIoError);
}

}  // namespace
}  // namespace ssd_dir_lock_test
}  // namespace mooncake_tier::daemon
