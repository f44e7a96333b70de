#include "tests/support/tierd_process.h"

#include <gtest/gtest.h>

#include <sstream>
#include <utility>

namespace mooncake_tier::testing {

std::unique_ptr<Subprocess> StartTierd(const std::string& binary,
                                       const std::string& output_dir,
                                       const std::string& name,
                                       std::vector<std::string> args) {
  SubprocessOptions options;
  options.binary = binary;
  options.args = std::move(args);
  options.output_dir = output_dir;
  options.name = name;
  Result<std::unique_ptr<Subprocess>> process = Subprocess::Start(options);
  EXPECT_TRUE(process.ok()) << process.status().ToString();
  return process.ok() ? std::move(*process) : nullptr;
}

std::map<std::string, std::string> ReadyFields(const std::string& path) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(ReadFileOrEmpty(path));
  for (std::string line; std::getline(lines, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) {
      fields[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  return fields;
}

}  // namespace mooncake_tier::testing
