#include "rpc/control_lane_messages.h"

#include <cstring>

namespace mooncake_tier::rpc {
namespace {

constexpr uint32_t kMagic = 0x4c43544d;  // "MTCL" read little-endian
constexpr uint16_t kVersion = 1;
constexpr uint16_t kKindRequest = 1;
constexpr uint16_t kKindReply = 2;
// The longest reason name on the wire ("OBJECT_ALREADY_EXISTS" and the like).
constexpr size_t kMaxReasonNameBytes = 64;

template <typename T>
void Put(std::string& out, T value) {
  unsigned char bytes[sizeof(T)];
  for (size_t i = 0; i < sizeof(T); ++i) {
    bytes[i] =
        static_cast<unsigned char>(static_cast<uint64_t>(value) >> (8 * i));
  }
  out.append(reinterpret_cast<const char*>(bytes), sizeof(T));
}

void PutString(std::string& out, std::string_view s) {
  Put<uint32_t>(out, static_cast<uint32_t>(s.size()));
  out.append(s);
}

Status Malformed(std::string_view what) {
  return Status(ErrorReason::kInvalidArgument,
                "malformed control lane message: " + std::string(what));
}

// Reads from a message, never past its end.
class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}

  template <typename T>
  bool Get(T* value) {
    if (in_.size() < sizeof(T)) return false;
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      v |= static_cast<uint64_t>(static_cast<unsigned char>(in_[i])) << (8 * i);
    }
    *value = static_cast<T>(v);
    in_.remove_prefix(sizeof(T));
    return true;
  }

  bool GetString(size_t limit, std::string_view* s) {
    uint32_t length = 0;
    if (!Get(&length) || length > limit || length > in_.size()) return false;
    *s = in_.substr(0, length);
    in_.remove_prefix(length);
    return true;
  }

  std::string_view rest() const { return in_; }

 private:
  std::string_view in_;
};

Status CheckHeader(Reader& r, uint16_t kind) {
  uint32_t magic = 0;
  uint16_t version = 0;
  uint16_t got_kind = 0;
  if (!r.Get(&magic) || !r.Get(&version) || !r.Get(&got_kind)) {
    return Malformed("shorter than its header");
  }
  if (magic != kMagic) return Malformed("bad magic");
  if (version != kVersion) {
    return Malformed("version " + std::to_string(version) + ", expected " +
                     std::to_string(kVersion));
  }
  if (got_kind != kind) return Malformed("unexpected kind");
  return Status::Ok();
}

void PutHeader(std::string& out, uint16_t kind) {
  Put<uint32_t>(out, kMagic);
  Put<uint16_t>(out, kVersion);
  Put<uint16_t>(out, kind);
}

}  // namespace

std::string EncodeControlLaneRequest(uint32_t method, uint64_t request_id,
                                     std::string_view payload) {
  std::string out;
  out.reserve(20 + payload.size());
  PutHeader(out, kKindRequest);
  Put<uint32_t>(out, method);
  Put<uint64_t>(out, request_id);
  out.append(payload);
  return out;
}

Result<ControlLaneRequest> DecodeControlLaneRequest(std::string_view in) {
  if (in.size() > kMaxControlLaneBytes) return Malformed("too large");
  Reader r(in);
  MT_RETURN_IF_ERROR(CheckHeader(r, kKindRequest));
  ControlLaneRequest out;
  if (!r.Get(&out.method) || !r.Get(&out.request_id)) {
    return Malformed("request header cut short");
  }
  out.payload = r.rest();
  return out;
}

std::string EncodeControlLaneReply(uint64_t request_id, const Status& status,
                                   std::string_view payload) {
  std::string_view message = status.message();
  if (message.size() > kMaxControlLaneMessageBytes) {
    message = message.substr(0, kMaxControlLaneMessageBytes);
  }
  const std::string_view reason =
      status.ok() ? std::string_view() : ReasonName(status.reason());
  std::string out;
  out.reserve(32 + reason.size() + message.size() +
              (status.ok() ? payload.size() : 0));
  PutHeader(out, kKindReply);
  Put<uint64_t>(out, request_id);
  PutString(out, reason);
  PutString(out, status.ok() ? std::string_view() : message);
  if (status.ok()) out.append(payload);
  return out;
}

Result<ControlLaneReply> DecodeControlLaneReply(std::string_view in) {
  if (in.size() > kMaxControlLaneBytes) return Malformed("too large");
  Reader r(in);
  MT_RETURN_IF_ERROR(CheckHeader(r, kKindReply));
  ControlLaneReply out;
  std::string_view reason;
  std::string_view message;
  if (!r.Get(&out.request_id) || !r.GetString(kMaxReasonNameBytes, &reason) ||
      !r.GetString(kMaxControlLaneMessageBytes, &message)) {
    return Malformed("reply header cut short");
  }
  if (reason.empty()) {
    if (!message.empty()) return Malformed("a message without a reason");
    out.payload = r.rest();
    return out;
  }
  if (!r.rest().empty()) return Malformed("a failed reply with a payload");
  ErrorReason decoded = ReasonFromName(reason);
  if (decoded == ErrorReason::kNone) decoded = ErrorReason::kInternal;
  out.status = Status(decoded, std::string(message));
  return out;
}

}  // namespace mooncake_tier::rpc
