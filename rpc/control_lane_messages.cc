#include "rpc/control_lane_messages.h"

#include <cstring>

#include "base/coding.h"

namespace mooncake_tier::rpc {
namespace {

constexpr uint32_t kMagic = 0x4c43544d;  // "MTCL" read little-endian
constexpr uint16_t kVersion = 1;
constexpr uint16_t kKindRequest = 1;
constexpr uint16_t kKindReply = 2;
// The longest reason name on the wire ("OBJECT_ALREADY_EXISTS" and the like).
constexpr size_t kMaxReasonNameBytes = 64;

Status Malformed(std::string_view what) {
  return Status(ErrorReason::kInvalidArgument,
                "malformed control lane message: " + std::string(what));
}

Status CheckHeader(ByteReader& r, uint16_t kind) {
  uint32_t magic = 0;
  uint16_t version = 0;
  uint16_t got_kind = 0;
  if (!r.GetFixed(&magic) || !r.GetFixed(&version) || !r.GetFixed(&got_kind)) {
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
  PutFixed<uint32_t>(out, kMagic);
  PutFixed<uint16_t>(out, kVersion);
  PutFixed<uint16_t>(out, kind);
}

}  // namespace

std::string EncodeControlLaneRequest(uint32_t method, uint64_t request_id,
                                     std::string_view payload) {
  std::string out;
  out.reserve(20 + payload.size());
  PutHeader(out, kKindRequest);
  PutFixed<uint32_t>(out, method);
  PutFixed<uint64_t>(out, request_id);
  out.append(payload);
  return out;
}

Result<ControlLaneRequest> DecodeControlLaneRequest(std::string_view in) {
  if (in.size() > kMaxControlLaneBytes) return Malformed("too large");
  ByteReader r(in);
  MT_RETURN_IF_ERROR(CheckHeader(r, kKindRequest));
  ControlLaneRequest out;
  if (!r.GetFixed(&out.method) || !r.GetFixed(&out.request_id)) {
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
  PutFixed<uint64_t>(out, request_id);
  PutLengthPrefixed<uint32_t>(out, reason);
  PutLengthPrefixed<uint32_t>(out, status.ok() ? std::string_view() : message);
  if (status.ok()) out.append(payload);
  return out;
}

Result<ControlLaneReply> DecodeControlLaneReply(std::string_view in) {
  if (in.size() > kMaxControlLaneBytes) return Malformed("too large");
  ByteReader r(in);
  MT_RETURN_IF_ERROR(CheckHeader(r, kKindReply));
  ControlLaneReply out;
  std::string_view reason;
  std::string_view message;
  if (!r.GetFixed(&out.request_id) ||
      !r.GetLengthPrefixed<uint32_t>(kMaxReasonNameBytes, &reason) ||
      !r.GetLengthPrefixed<uint32_t>(kMaxControlLaneMessageBytes, &message)) {
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
