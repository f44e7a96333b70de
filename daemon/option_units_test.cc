#include "daemon/option_units.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace mooncake_tier::daemon {
namespace option_units_test {
namespace {

// Parses `args` (without the program name) with one size and one duration.
struct Parsed {
  uint64_t size = 7;
  Duration duration = std::chrono::seconds(3);
  std::string error;
};

Parsed Parse(std::vector<std::string> args) {
  Parsed p;
  CLI::App app("test");
  AddSizeOption(&app, "--size", &p.size, "a size", /*min_bytes=*/1);
  AddDurationOption(&app, "--wait", &p.duration, "a duration");
  std::vector<const char*> argv = {"test"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    p.error = e.what();
  }
  return p;
}

TEST(OptionUnitsTest, SizesTakeBinaryUnits) {
  EXPECT_EQ(Parse({"--size", "4GiB"}).size, uint64_t{4} << 30);
  EXPECT_EQ(Parse({"--size", "512MiB"}).size, uint64_t{512} << 20);
  EXPECT_EQ(Parse({"--size", "512mib"}).size, uint64_t{512} << 20);
  EXPECT_EQ(Parse({"--size", "64k"}).size, uint64_t{64} << 10);
  EXPECT_EQ(Parse({"--size", "2GB"}).size, uint64_t{2} << 30);
  EXPECT_EQ(Parse({"--size", "123456"}).size, 123456u);
  EXPECT_EQ(Parse({"--size=1TiB"}).size, uint64_t{1} << 40);
}

TEST(OptionUnitsTest, BadSizesNameTheFlag) {
  for (const char* bad : {"abc", "-1", "-1GiB", "1.5GiB", "4XB", "0"}) {
    const Parsed p = Parse({"--size", bad});
    EXPECT_NE(p.error.find("--size"), std::string::npos)
        << bad << ": " << p.error;
    EXPECT_EQ(p.size, 7u) << bad;
  }
}

TEST(OptionUnitsTest, DurationsNeedAUnit) {
  EXPECT_EQ(Parse({"--wait", "250ms"}).duration,
            std::chrono::milliseconds(250));
  EXPECT_EQ(Parse({"--wait", "10s"}).duration, std::chrono::seconds(10));
  EXPECT_EQ(Parse({"--wait", "5m"}).duration, std::chrono::minutes(5));
  EXPECT_EQ(Parse({"--wait", "1h"}).duration, std::chrono::hours(1));
  for (const char* bad : {"10", "0s", "-1s", "1.5s", "10parsecs"}) {
    const Parsed p = Parse({"--wait", bad});
    EXPECT_NE(p.error.find("--wait"), std::string::npos)
        << bad << ": " << p.error;
    EXPECT_EQ(p.duration, std::chrono::seconds(3)) << bad;
  }
  EXPECT_NE(Parse({"--wait", "10"}).error.find("needs a unit"),
            std::string::npos);
}

TEST(OptionUnitsTest, DurationsBeyondTheirRangeAreRefused) {
  // Caught by fuzz/config_fuzz (UBSAN): a value whose nanoseconds overflow
  // int64 was converted anyway (a negative duration in practice).
  for (const char* bad : {"10000000000000ms", "3000000000h",
                          "9223372036854775807ms", "2199023255553ms"}) {
    const Parsed p = Parse({"--wait", bad});
    EXPECT_NE(p.error.find("must be at most"), std::string::npos)
        << bad << ": " << p.error;
    EXPECT_EQ(p.duration, std::chrono::seconds(3)) << bad;
  }
  EXPECT_EQ(Parse({"--wait", "2199023255552ms"}).duration,
            std::chrono::milliseconds(int64_t{1} << 41));
}

TEST(OptionUnitsTest, DefaultsAreShownAsFlagsTakeThem) {
  CLI::App app("test");
  uint64_t size = uint64_t{8} << 30;
  Duration wait = std::chrono::milliseconds(100);
  EXPECT_EQ(AddSizeOption(&app, "--size", &size, "")->get_default_str(),
            "8GiB");
  EXPECT_EQ(AddDurationOption(&app, "--wait", &wait, "")->get_default_str(),
            "100ms");
}

TEST(OptionUnitsTest, Formatting) {
  EXPECT_EQ(FormatSizeFlag(0), "0");
  EXPECT_EQ(FormatSizeFlag(1000), "1000");
  EXPECT_EQ(FormatSizeFlag(1536ull << 20), "1536MiB");
  EXPECT_EQ(FormatSizeFlag(1ull << 30), "1GiB");
  EXPECT_EQ(FormatSizeHuman(100), "100 B");
  EXPECT_EQ(FormatSizeHuman(1ull << 30), "1.0 GiB");
  EXPECT_EQ(FormatSizeHuman(8ull << 30), "8.0 GiB");
  EXPECT_EQ(FormatSizeHuman(1536ull << 20), "1.5 GiB");
  EXPECT_EQ(FormatDurationFlag(std::chrono::seconds(10)), "10s");
  EXPECT_EQ(FormatDurationFlag(std::chrono::seconds(60)), "1m");
  EXPECT_EQ(FormatDurationFlag(std::chrono::milliseconds(1500)), "1500ms");
  EXPECT_EQ(FormatDurationFlag(std::chrono::hours(2)), "2h");
}

}  // namespace
}  // namespace option_units_test
}  // namespace mooncake_tier::daemon
