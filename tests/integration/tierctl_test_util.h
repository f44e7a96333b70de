#pragma once

// What the tierctl end-to-end tests share: exit codes, the token their
// servers use, and running the real mooncake-tierctl (MT_TIERCTL_PATH)
// with a clean environment.

#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_command.h"

namespace mooncake_tier::testing::tierctl {

using nlohmann::json;

constexpr int kOk = 0;
constexpr int kError = 1;
constexpr int kUsage = 2;
constexpr int kNotFound = 3;

constexpr char kToken[] = "s3cret";

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The JSON document on stdout; a parse failure fails the test.
inline json Json(const CommandResult& result) {
  json document = json::parse(result.out, nullptr, /*allow_exceptions=*/false);
  EXPECT_FALSE(document.is_discarded()) << "not JSON: " << result.out;
  return document;
}

// The JSON Lines documents on stdout (`top -o json`); a line that does not
// parse fails the test.
inline std::vector<json> JsonLines(const CommandResult& result) {
  std::istringstream in(result.out);
  std::vector<json> documents;
  for (std::string line; std::getline(in, line);) {
    documents.push_back(json::parse(line, nullptr, false));
    EXPECT_FALSE(documents.back().is_discarded()) << line;
  }
  return documents;
}

// `tierctl` with the environment cleared of the CLI's variables and set to
// `env` ("NAME=value" items), through env(1), so that a variable of the
// test run never leaks in.
inline CommandResult Tierctl(
    const std::vector<std::string>& env, const std::vector<std::string>& args,
    std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  std::vector<std::string> argv = {"/usr/bin/env",
                                   "-u",
                                   "MOONCAKE_TIER_ENDPOINT",
                                   "-u",
                                   "MOONCAKE_TIER_TOKEN",
                                   "-u",
                                   "MOONCAKE_TIER_TLS_CA",
                                   "-u",
                                   "MOONCAKE_TIER_TLS_CERT",
                                   "-u",
                                   "MOONCAKE_TIER_TLS_KEY",
                                   "-u",
                                   "MOONCAKE_TIER_CLIENT_TOKEN_FILE"};
  argv.insert(argv.end(), env.begin(), env.end());
  argv.push_back(MT_TIERCTL_PATH);
  argv.insert(argv.end(), args.begin(), args.end());
  Result<CommandResult> result = RunCommand(argv, timeout);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : CommandResult();
}

}  // namespace mooncake_tier::testing::tierctl
