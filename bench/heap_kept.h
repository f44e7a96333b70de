#pragma once

// A scope in which the process keeps the heap memory it frees, for
// benchmarks that build and drop one large master after another.
//
// Thread safety: construct and destroy it on one thread, with no other
// thread allocating in between being measured (mallopt is process-wide).

#include <malloc.h>

namespace mooncake_tier::bench {

// While alive, freed heap memory stays with the process instead of going
// back to the kernel (no trimming; blocks up to 32 MiB, glibc's largest
// allowed threshold, from the heap rather than their own mappings). Each
// run builds a fresh master of a few hundred MB; without this every run
// pays the kernel again for zeroed pages, and how much varies with what
// the host does, which swamped the difference being measured. A master
// that has run for a while has its heap grown already.
//
// It cannot restore glibc's behaviour on the way out. Setting either
// threshold turns off glibc's dynamic thresholds (which raise them as large
// blocks are freed), and glibc has no call to turn them back on; so the
// destructor trims and leaves both at a fixed 128 KiB, glibc's initial
// value, for the rest of the process. Phases that follow it should count
// work, not time, or build no large masters.
class HeapKeptForBench {
 public:
  HeapKeptForBench() {
    kept_ = mallopt(M_TRIM_THRESHOLD, kNoTrim) == 1 &&
            mallopt(M_MMAP_THRESHOLD, kLargestMmapThreshold) == 1;
  }
  // Fixed 128 KiB thresholds from here on, not glibc's dynamic ones (above).
  ~HeapKeptForBench() {
    mallopt(M_TRIM_THRESHOLD, kGlibcInitialThreshold);
    mallopt(M_MMAP_THRESHOLD, kGlibcInitialThreshold);
    malloc_trim(0);
  }
  HeapKeptForBench(const HeapKeptForBench&) = delete;
  HeapKeptForBench& operator=(const HeapKeptForBench&) = delete;

  // Whether malloc took both settings.
  bool kept() const { return kept_; }

 private:
  static constexpr int kNoTrim = 1 << 30;
  static constexpr int kLargestMmapThreshold = 32 << 20;
  static constexpr int kGlibcInitialThreshold = 128 << 10;
  bool kept_ = false;
};

}  // namespace mooncake_tier::bench
