#include "bench/result_sink.h"

#include <iomanip>

namespace mooncake_tier::bench {

void ResultSink::Emit(const nlohmann::ordered_json& result) {
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
