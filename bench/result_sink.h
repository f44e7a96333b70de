#pragma once

// Where a benchmark scenario reports its figures: one JSON object per result,
// printed as one line with --json, or as aligned "key=value" text otherwise.
//
// Thread safety: Emit may be called from one thread at a time.

#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

namespace mooncake_tier::bench {

class ResultSink {
 public:
  explicit ResultSink(bool json, std::ostream& out = std::cout)
      : json_(json), out_(out) {}

  void Emit(const nlohmann::ordered_json& result);
  // Progress for long runs; goes to stderr so --json output stays parseable.
  void Progress(const std::string& line) const;

 private:
  bool json_;
  std::ostream& out_;
};

// Common options every scenario understands.
struct CommonOptions {
  std::string scratch_dir = "/tmp";  // where files may be created
  double scale = 1.0;                // multiplies the work of a scenario
};

}  // namespace mooncake_tier::bench
