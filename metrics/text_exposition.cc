#include "metrics/text_exposition.h"

#include <sstream>

#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace mooncake_tier::metrics {

std::string RenderText(
    const std::vector<const prometheus::Collectable*>& collectors) {
  std::vector<prometheus::MetricFamily> families;
  for (const prometheus::Collectable* collector : collectors) {
    if (collector == nullptr) continue;
    std::vector<prometheus::MetricFamily> more = collector->Collect();
    families.insert(families.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace mooncake_tier::metrics
