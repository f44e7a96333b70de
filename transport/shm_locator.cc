#include "transport/shm_locator.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/coding.h"

namespace mooncake_tier {
namespace {

constexpr size_t kHeaderBytes = 8 + 2 + 2 + 4;

void PutU16(std::string& out, uint16_t v) { PutFixed(out, v); }
void PutU32(std::string& out, uint32_t v) { PutFixed(out, v); }
void PutU64(std::string& out, uint64_t v) { PutFixed(out, v); }
void PutBytes(std::string& out, const std::array<uint8_t, 16>& bytes) {
  out.append(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Reads little-endian fields; every read is bounds-checked.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U16(uint16_t& v) { return in_.GetFixed(&v); }
  bool U32(uint32_t& v) { return in_.GetFixed(&v); }
  bool U64(uint64_t& v) { return in_.GetFixed(&v); }
  bool Bytes(std::array<uint8_t, 16>& out) {
    std::string_view view;
    if (!in_.GetBytes(out.size(), &view)) return false;
    std::memcpy(out.data(), view.data(), out.size());
    return true;
  }
  bool View(size_t n, std::string_view& out) { return in_.GetBytes(n, &out); }
  size_t remaining() const { return in_.remaining(); }

 private:
  ByteReader in_;
};

Status Malformed(std::string_view why) {
  return Status(ErrorReason::kInvalidArgument,
                "malformed remote key envelope: " + std::string(why));
}

// Locator v1; an empty string when it is usable, else why not.
std::string ParseLocatorV1(std::string_view bytes, ShmLocator& out) {
  if (bytes.size() != kShmLocatorV1Bytes) {
    return "locator of " + std::to_string(bytes.size()) + " bytes, expected " +
           std::to_string(kShmLocatorV1Bytes);
  }
  Reader r(bytes);
  uint32_t fd = 0;
  r.Bytes(out.boot_id);
  r.U32(out.pid);
  r.U32(fd);
  r.Bytes(out.token);
  r.U64(out.inode);
  r.U64(out.file_size);
  r.U64(out.file_offset);
  out.fd = static_cast<int32_t>(fd);
  if (out.boot_id == BootId{}) return "locator without a host identity";
  if (out.pid == 0 || out.fd < 0)
    return "locator with no process or descriptor";
  if (out.file_size == 0 || out.file_offset > out.file_size) {
    return "locator with an empty file or an offset past its end";
  }
  return "";
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

BootId ReadBootId() {
  BootId id{};
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string text;
  if (!(in >> text)) return BootId{};
  size_t n = 0;
  for (size_t i = 0; i < text.size() && n < 2 * id.size(); ++i) {
    if (text[i] == '-') continue;
    const int v = HexValue(text[i]);
    if (v < 0) return BootId{};
    id[n / 2] = static_cast<uint8_t>(id[n / 2] << 4 | v);
    ++n;
  }
  return n == 2 * id.size() ? id : BootId{};
}

}  // namespace

std::string EncodeShmEnvelope(const ShmLocator& locator,
                              std::string_view ucx_key) {
  std::string out;
  out.reserve(kHeaderBytes + kShmLocatorV1Bytes + 4 + ucx_key.size());
  PutU64(out, kShmEnvelopeMagic);
  PutU16(out, kShmEnvelopeVersion);
  PutU16(out, 0);
  PutU32(out, kShmLocatorV1Bytes);
  PutBytes(out, locator.boot_id);
  PutU32(out, locator.pid);
  PutU32(out, static_cast<uint32_t>(locator.fd));
  PutBytes(out, locator.token);
  PutU64(out, locator.inode);
  PutU64(out, locator.file_size);
  PutU64(out, locator.file_offset);
  PutU32(out, static_cast<uint32_t>(ucx_key.size()));
  out.append(ucx_key);
  return out;
}

Result<DecodedRemoteKey> DecodeRemoteKey(std::string_view remote_key) {
  DecodedRemoteKey out;
  Reader r(remote_key);
  uint64_t magic = 0;
  if (!r.U64(magic) || magic != kShmEnvelopeMagic) {
    out.ucx_key = remote_key;  // a raw UCX key
    return out;
  }
  uint16_t version = 0, reserved = 0;
  uint32_t locator_length = 0, key_length = 0;
  std::string_view locator_bytes;
  if (!r.U16(version) || !r.U16(reserved) || !r.U32(locator_length)) {
    return Malformed("truncated header");
  }
  if (!r.View(locator_length, locator_bytes)) {
    return Malformed("locator runs past the end");
  }
  if (!r.U32(key_length) || !r.View(key_length, out.ucx_key)) {
    return Malformed("UCX key runs past the end");
  }
  if (r.remaining() != 0) return Malformed("trailing bytes");
  if (out.ucx_key.empty()) return Malformed("empty UCX key");
  if (version != kShmEnvelopeVersion) {
    out.ignored_locator = "unknown locator version " + std::to_string(version);
    return out;
  }
  ShmLocator locator;
  out.ignored_locator = ParseLocatorV1(locator_bytes, locator);
  if (out.ignored_locator.empty()) out.locator = locator;
  return out;
}

std::string ShmFileName(const ShmToken& token) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name(kShmNamePrefix);
  for (uint8_t b : token) {
    name.push_back(kHex[b >> 4]);
    name.push_back(kHex[b & 15]);
  }
  return name;
}

Result<ShmToken> NewShmToken() {
  ShmToken token{};
  size_t filled = 0;
  while (filled < token.size()) {
    const ssize_t n =
        getrandom(token.data() + filled, token.size() - filled, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return Status(ErrorReason::kIoError,
                    std::string("getrandom: ") + std::strerror(errno));
    }
    filled += static_cast<size_t>(n);
  }
  return token;
}

const BootId& HostBootId() {
  static const BootId id = ReadBootId();
  return id;
}

}  // namespace mooncake_tier
