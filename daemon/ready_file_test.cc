#include "daemon/ready_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"
#include "tests/support/subprocess.h"
#include "tests/support/temp_dir.h"

namespace mooncake_tier::daemon {
namespace ready_file_test {
namespace {

using testing::ReadFileOrEmpty;
using testing::TempDir;

TEST(ReadyFileTest, PublishWritesAtomicallyAndWithdrawRemoves) {
  TempDir dir;
  const std::string path = dir.path() + "/ready";
  ReadyFile ready(path);
  ASSERT_TRUE(ready.Publish({{"pid", "42"}, {"mode", "master"}}).ok());
  EXPECT_EQ(ReadFileOrEmpty(path), "pid=42\nmode=master\n");
  // Nothing but the file itself is left behind (no temporary).
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
    (void)entry;
    ++files;
  }
  EXPECT_EQ(files, 1u);
  ready.Withdraw();
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(ReadyFileTest, StaleFileIsRemovedAtCreation) {
  TempDir dir;
  const std::string path = dir.path() + "/ready";
  std::ofstream(path) << "pid=1\n";
  ReadyFile ready(path);
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(ReadyFileTest, UnwritableDirectoryIsAnError) {
  ReadyFile ready("/nonexistent-dir-for-mooncake/ready");
  const Status s = ready.Publish({{"pid", "1"}});
  EXPECT_EQ(s.reason(), ErrorReason::kIoError);
  EXPECT_NE(s.message().find("/nonexistent-dir-for-mooncake"),
            std::string::npos);
}

TEST(ReadyFileTest, EmptyPathDoesNothing) {
  ReadyFile ready("");
  EXPECT_TRUE(ready.Publish({{"pid", "1"}}).ok());
  ready.Withdraw();
}

}  // namespace
}  // namespace ready_file_test
}  // namespace mooncake_tier::daemon
