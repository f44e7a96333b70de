#include "cli/table.h"

#include <gtest/gtest.h>

#include <sstream>

namespace mooncake_tier::cli {
namespace table_test {
namespace {

TEST(TableTest, AlignsColumnsAndPadsShortRows) {
  Table table({"KEY", "SIZE", "GROUP"});
  table.AddRow({"a-long-key", "7", "g"});
  table.AddRow({"k", "1048576"});
  std::ostringstream out;
  table.Render(out);
  EXPECT_EQ(out.str(),
            "KEY         SIZE     GROUP\n"
            "a-long-key  7        g\n"
            "k           1048576  -\n");
  EXPECT_EQ(table.rows(), 2u);
}

}  // namespace
}  // namespace table_test
}  // namespace mooncake_tier::cli
