#include "bench/result_sink.h"

#include <iomanip>

namespace mooncake_tier::bench {

void ResultSink::SetTag(const std::string& key, nlohmann::ordered_json value) {
  if (value.is_null()) {
    tags_.erase(key);
  } else {
    tags_[key] = std::move(value);
  }
}

void ResultSink::Emit(const nlohmann::ordered_json& tagless) {
  nlohmann::ordered_json result = tagless;
  for (const auto& [key, value] : tags_.items()) result[key] = value;
  emitted_.push_back(result);
  if (json_) {
    out_ << result.dump() << '\n';
  } else {
    bool first = true;
    for (const auto& [key, value] : result.items()) {
      if (!first) out_ << "  ";
      first = false;
      out_ << key << '=';
      if (value.is_number_float()) {
        out_ << std::fixed << std::setprecision(3) << value.get<double>();
      } else if (value.is_string()) {
        out_ << value.get<std::string>();
      } else {
        out_ << value.dump();
      }
    }
    out_ << '\n';
  }
  out_.flush();
}

void ResultSink::Progress(const std::string& line) const {
  std::cerr << "[bench] " << line << '\n';
}

}  // namespace mooncake_tier::bench
