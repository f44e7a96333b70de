#include "transport/ucx_ssd_read_messages.h"

#include <algorithm>

#include "base/coding.h"

namespace mooncake_tier {
namespace {

constexpr uint32_t kMagic = 0x5253544d;  // "MTSR"
// 2: staged requests (flags), staged replies, releases.
constexpr uint16_t kVersion = 2;
constexpr uint16_t kKindRequest = 1;
constexpr uint16_t kKindReply = 2;
constexpr uint16_t kKindRelease = 3;

constexpr uint32_t kKnownRequestFlags = kSsdReadFlagStaged;
// SsdReadReply flags on the wire.
constexpr uint32_t kReplyStaged = 1;
constexpr uint32_t kReplyStagingRefused = 2;

constexpr uint16_t kReasonCount = 0
#define MOONCAKE_TIER_REASON_COUNT(name, wire, code) +1
    MOONCAKE_TIER_ERROR_REASONS(MOONCAKE_TIER_REASON_COUNT)
#undef MOONCAKE_TIER_REASON_COUNT
    ;

// The protocol's field helpers over base/coding.h.
class Writer {
 public:
  void U16(uint16_t v) { PutFixed(out_, v); }
  void U32(uint32_t v) { PutFixed(out_, v); }
  void U64(uint64_t v) { PutFixed(out_, v); }
  // Strings longer than the caller's limit must be cut before.
  void Bytes32(std::string_view s) { PutLengthPrefixed<uint32_t>(out_, s); }
  void Bytes16(std::string_view s) { PutLengthPrefixed<uint16_t>(out_, s); }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool U16(uint16_t* v) { return in_.GetFixed(v); }
  bool U32(uint32_t* v) { return in_.GetFixed(v); }
  bool U64(uint64_t* v) { return in_.GetFixed(v); }
  bool Bytes32(std::string* s, size_t max) { return Take<uint32_t>(s, max); }
  bool Bytes16(std::string* s, size_t max) { return Take<uint16_t>(s, max); }
  bool empty() const { return in_.empty(); }
  size_t remaining() const { return in_.remaining(); }

 private:
  template <typename LengthT>
  bool Take(std::string* s, size_t max) {
    std::string_view view;
    if (!in_.GetLengthPrefixed<LengthT>(max, &view)) return false;
    s->assign(view);
    return true;
  }
  ByteReader in_;
};

Status Malformed(std::string_view what) {
  return Status(ErrorReason::kInvalidArgument,
                "malformed SSD read message: " + std::string(what));
}

void WriteHeader(Writer& w, uint16_t kind, uint64_t request_id) {
  w.U32(kMagic);
  w.U16(kVersion);
  w.U16(kind);
  w.U64(request_id);
}

Status ReadHeader(Reader& r, uint16_t kind, uint64_t* request_id) {
  uint32_t magic = 0;
  uint16_t version = 0;
  uint16_t got_kind = 0;
  if (!r.U32(&magic) || magic != kMagic) return Malformed("bad magic");
  if (!r.U16(&version) || version != kVersion) {
    return Malformed("unsupported version");
  }
  if (!r.U16(&got_kind) || got_kind != kind) return Malformed("wrong kind");
  if (!r.U64(request_id)) return Malformed("truncated header");
  return Status();
}

Status ReadRequestHeader(Reader& r, SsdReadRequestHeader* header) {
  MT_RETURN_IF_ERROR(ReadHeader(r, kKindRequest, &header->request_id));
  if (!r.U32(&header->budget_ms) || !r.U32(&header->flags)) {
    return Malformed("truncated request header");
  }
  if (!r.Bytes32(&header->reply_address, kMaxWorkerAddressBytes) ||
      header->reply_address.empty()) {
    return Malformed("bad reply address");
  }
  return Status();
}

void WriteStatus(Writer& w, const Status& status) {
  w.U16(static_cast<uint16_t>(status.reason()));
  const std::string& m = status.message();
  w.Bytes16(std::string_view(m).substr(0, kMaxStatusMessageBytes));
}

bool ReadStatus(Reader& r, Status* status) {
  uint16_t reason = 0;
  std::string message;
  if (!r.U16(&reason) || reason >= kReasonCount ||
      !r.Bytes16(&message, kMaxStatusMessageBytes)) {
    return false;
  }
  *status = Status(static_cast<ErrorReason>(reason), std::move(message));
  return true;
}

}  // namespace

std::string EncodeSsdReadRequest(const SsdReadRequest& request) {
  Writer w;
  WriteHeader(w, kKindRequest, request.header.request_id);
  w.U32(request.header.budget_ms);
  w.U32(request.header.flags);
  w.Bytes32(request.header.reply_address);
  w.U32(static_cast<uint32_t>(request.ops.size()));
  const bool staged = request.header.staged();
  for (const SsdReadRequestOp& op : request.ops) {
    w.Bytes32(op.key);
    w.U64(op.length);
    if (staged) continue;  // the client names no buffer
    w.U64(op.address);
    w.Bytes32(op.packed_key);
  }
  return w.Take();
}

Result<SsdReadRequestHeader> DecodeSsdReadRequestHeader(std::string_view in) {
  Reader r(in);
  SsdReadRequestHeader header;
  MT_RETURN_IF_ERROR(ReadRequestHeader(r, &header));
  return header;
}

Result<SsdReadRequest> DecodeSsdReadRequest(std::string_view in) {
  Reader r(in);
  SsdReadRequest request;
  MT_RETURN_IF_ERROR(ReadRequestHeader(r, &request.header));
  if ((request.header.flags & ~kKnownRequestFlags) != 0) {
    return Malformed("unknown request flags");
  }
  const bool staged = request.header.staged();
  uint32_t count = 0;
  if (!r.U32(&count) || count == 0 || count > kMaxSsdReadOps) {
    return Malformed("bad operation count");
  }
  request.ops.resize(count);
  for (SsdReadRequestOp& op : request.ops) {
    if (!r.Bytes32(&op.key, kMaxSsdReadKeyBytes) || op.key.empty()) {
      return Malformed("bad key");
    }
    if (!r.U64(&op.length)) return Malformed("bad buffer");
    if (staged) continue;
    if (!r.U64(&op.address) || !r.Bytes32(&op.packed_key, kMaxPackedKeyBytes)) {
      return Malformed("bad buffer");
    }
    if (op.length > 0 && (op.packed_key.empty() || op.address == 0 ||
                          op.address > UINT64_MAX - op.length)) {
      return Malformed("bad buffer");
    }
  }
  if (!r.empty()) return Malformed("trailing bytes");
  return request;
}

std::string EncodeSsdReadReply(const SsdReadReply& reply) {
  Writer w;
  WriteHeader(w, kKindReply, reply.request_id);
  WriteStatus(w, reply.status);
  w.U32((reply.staged ? kReplyStaged : 0) |
        (reply.staging_refused ? kReplyStagingRefused : 0));
  if (reply.staged) {
    w.U64(reply.lease_id);
    w.U32(reply.lease_ms);
  }
  w.U32(static_cast<uint32_t>(reply.results.size()));
  for (size_t i = 0; i < reply.results.size(); ++i) {
    const Result<uint64_t>& result = reply.results[i];
    if (result.ok()) {
      w.U16(static_cast<uint16_t>(ErrorReason::kNone));
      w.U64(*result);
      if (reply.staged) w.U64(reply.offsets[i]);
    } else {
      WriteStatus(w, result.status());
    }
  }
  return w.Take();
}

Result<uint64_t> DecodeSsdReadReplyId(std::string_view in) {
  Reader r(in);
  uint64_t id = 0;
  MT_RETURN_IF_ERROR(ReadHeader(r, kKindReply, &id));
  return id;
}

Result<SsdReadReply> DecodeSsdReadReply(std::string_view in) {
  Reader r(in);
  SsdReadReply reply;
  MT_RETURN_IF_ERROR(ReadHeader(r, kKindReply, &reply.request_id));
  if (!ReadStatus(r, &reply.status)) return Malformed("bad status");
  uint32_t flags = 0;
  if (!r.U32(&flags) || (flags & ~(kReplyStaged | kReplyStagingRefused)) != 0) {
    return Malformed("bad reply flags");
  }
  reply.staged = (flags & kReplyStaged) != 0;
  reply.staging_refused = (flags & kReplyStagingRefused) != 0;
  if ((reply.staged && !reply.status.ok()) ||
      (reply.staging_refused && reply.status.ok())) {
    return Malformed("reply flags contradict its status");
  }
  if (reply.staged && (!r.U64(&reply.lease_id) || !r.U32(&reply.lease_ms))) {
    return Malformed("truncated lease");
  }
  uint32_t count = 0;
  if (!r.U32(&count) || count > kMaxSsdReadOps ||
      (!reply.status.ok() && count != 0)) {
    return Malformed("bad result count");
  }
  reply.results.reserve(count);
  if (reply.staged) reply.offsets.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    uint16_t reason = 0;
    if (!r.U16(&reason)) return Malformed("truncated result");
    if (reason == static_cast<uint16_t>(ErrorReason::kNone)) {
      uint64_t size = 0;
      if (!r.U64(&size)) return Malformed("truncated result");
      reply.results.emplace_back(size);
      if (!reply.staged) continue;
      uint64_t offset = 0;
      if (!r.U64(&offset)) return Malformed("truncated result");
      if (size > 0 && reply.lease_id == 0) {
        return Malformed("staged value without a lease");
      }
      if (offset > UINT64_MAX - size) return Malformed("bad staged offset");
      reply.offsets.push_back(offset);
      continue;
    }
    std::string message;
    if (reason >= kReasonCount ||
        !r.Bytes16(&message, kMaxStatusMessageBytes)) {
      return Malformed("bad result status");
    }
    reply.results.emplace_back(
        Status(static_cast<ErrorReason>(reason), std::move(message)));
    if (reply.staged) reply.offsets.push_back(0);
  }
  if (!r.empty()) return Malformed("trailing bytes");
  return reply;
}

std::string EncodeSsdReadRelease(uint64_t lease_id) {
  Writer w;
  WriteHeader(w, kKindRelease, lease_id);
  return w.Take();
}

Result<uint64_t> DecodeSsdReadRelease(std::string_view in) {
  Reader r(in);
  uint64_t lease_id = 0;
  MT_RETURN_IF_ERROR(ReadHeader(r, kKindRelease, &lease_id));
  if (lease_id == 0) return Malformed("release of lease 0");
  if (!r.empty()) return Malformed("trailing bytes");
  return lease_id;
}

}  // namespace mooncake_tier
