#pragma once

// Where a benchmark scenario reports its figures: one JSON object per result,
// printed as one line with --json, or as aligned "key=value" text otherwise.
//
// Thread safety: Emit may be called from one thread at a time.

#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace mooncake_tier::bench {

class ResultSink {
 public:
  explicit ResultSink(bool json, std::ostream& out = std::cout)
      : json_(json), out_(out) {}

  // Prints `result` (with the tags set, after its own fields) and keeps a
  // copy (see emitted()).
  void Emit(const nlohmann::ordered_json& result);
  // Adds `key: value` to every result emitted from now on (a variant of a
  // run, such as "tls"); a null value removes it.
  void SetTag(const std::string& key, nlohmann::ordered_json value);
  // Every result emitted so far, tags included.
  const std::vector<nlohmann::ordered_json>& emitted() const {
    return emitted_;
  }
  // Progress for long runs; goes to stderr so --json output stays parseable.
  void Progress(const std::string& line) const;

 private:
  bool json_;
  std::ostream& out_;
  nlohmann::ordered_json tags_ = nlohmann::ordered_json::object();
  std::vector<nlohmann::ordered_json> emitted_;
};

// Common options every scenario understands.
struct CommonOptions {
  std::string scratch_dir = "/tmp";  // where files may be created
  double scale = 1.0;                // multiplies the work of a scenario
};

}  // namespace mooncake_tier::bench
