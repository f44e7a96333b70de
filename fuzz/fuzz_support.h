#pragma once

// What every harness of fuzz/ shares: logs silenced once, a size cap on
// inputs, and a property check that libFuzzer reports as a crash (so the
// input is saved and the run fails) when the code under test breaks a
// contract without crashing.
//
// Thread safety: harnesses run one input at a time on one thread.

#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace mooncake_tier::fuzz {

// Turns every spdlog logger off: harnesses drive error paths on every run,
// and a log line per run would cost more than the run. Returns true so that
// a harness can call it from a static initializer.
inline bool SilenceLogs() {
  spdlog::set_level(spdlog::level::off);
  return true;
}

// The input as text (keys, paths and bodies are bytes; no UTF-8 implied).
inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A broken property: prints what and where, then aborts, which libFuzzer
// reports as a crash with the input that caused it.
[[noreturn]] inline void Fail(const char* file, int line, const char* what) {
  std::fprintf(stderr, "%s:%d: fuzz property violated: %s\n", file, line, what);
  std::abort();
}

}  // namespace mooncake_tier::fuzz

// FUZZ_CHECK(cond, "what must hold"): Fail unless cond.
#define FUZZ_CHECK(cond, what)                                          \
  do {                                                                  \
    if (!(cond))                                                        \
      ::mooncake_tier::fuzz::Fail(__FILE__, __LINE__, what ": " #cond); \
  } while (false)
