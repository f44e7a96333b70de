#pragma once

// Fixed-width little-endian integers: the byte order of every record the
// SSD store writes and of every message the project frames by hand (the
// control lane, the SSD read protocol, shared-memory locators). Written
// byte by byte, so the layout is the same on any host and no read is
// unaligned.
//
// ByteReader walks a message from its start and never reads past its end:
// every Get answers false, and consumes nothing, when the bytes are not
// there. That is what parsing untrusted input needs; callers turn false
// into their own "malformed" error.
//
// Thread safety: functions are pure; a ByteReader belongs to one thread.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mooncake_tier {

// Writes `value` into the sizeof(T) bytes at `dst`, least significant first.
template <std::unsigned_integral T, typename Byte>
requires(sizeof(Byte) == 1) void EncodeFixed(Byte* dst, T value) {
  for (size_t i = 0; i < sizeof(T); ++i) {
    dst[i] = static_cast<Byte>(static_cast<uint64_t>(value) >> (8 * i));
  }
}

// Reads the value EncodeFixed wrote at `src`.
template <std::unsigned_integral T, typename Byte>
requires(sizeof(Byte) == 1) T DecodeFixed(const Byte* src) {
  uint64_t value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    value |= static_cast<uint64_t>(static_cast<unsigned char>(src[i]))
             << (8 * i);
  }
  return static_cast<T>(value);
}

// Appends `value` to `out`, least significant byte first.
template <std::unsigned_integral T>
void PutFixed(std::string& out, T value) {
  char bytes[sizeof(T)];
  EncodeFixed(bytes, value);
  out.append(bytes, sizeof(T));
}

// Appends `s` after its length as a LengthT. The caller keeps `s` within
// what a LengthT can count.
template <std::unsigned_integral LengthT>
void PutLengthPrefixed(std::string& out, std::string_view s) {
  PutFixed<LengthT>(out, static_cast<LengthT>(s.size()));
  out.append(s);
}

class ByteReader {
 public:
  explicit ByteReader(std::string_view in) : in_(in) {}

  template <std::unsigned_integral T>
  bool GetFixed(T* value) {
    if (in_.size() < sizeof(T)) return false;
    *value = DecodeFixed<T>(in_.data());
    in_.remove_prefix(sizeof(T));
    return true;
  }

  // The next `n` bytes, as a view into the message.
  bool GetBytes(size_t n, std::string_view* out) {
    if (in_.size() < n) return false;
    *out = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }

  // A string PutLengthPrefixed<LengthT> wrote, refused when its length is
  // over `max_bytes` or runs past the message. On false the reader may have
  // consumed the length.
  template <std::unsigned_integral LengthT>
  bool GetLengthPrefixed(size_t max_bytes, std::string_view* out) {
    LengthT length = 0;
    return GetFixed(&length) && length <= max_bytes && GetBytes(length, out);
  }

  size_t remaining() const { return in_.size(); }
  bool empty() const { return in_.empty(); }
  std::string_view rest() const { return in_; }

 private:
  std::string_view in_;
};

}  // namespace mooncake_tier
