#include "base/clock.h"

namespace mooncake_tier {

SystemClock* SystemClock::Default() {
  static SystemClock* const clock = new SystemClock();
  return clock;
}

}  // namespace mooncake_tier
