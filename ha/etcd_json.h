#pragma once

// Internal to ha/ (EtcdClient's implementation; nothing outside the module
// includes it): the encoding etcd's v3 JSON gateway speaks, kept apart from
// the HTTP plumbing so each can be read on its own.
//   - bytes fields are padded base64; 64-bit integers are JSON strings;
//   - fields at their default (0, "", false) are left out of replies;
//   - errors come as {"error","message","code"} with a gRPC code, except
//     that the election service reports every error as code 2 (Unknown),
//     so a few are recognised by their message.
//
// Thread safety: free functions on values; ReplyReader is one object per
// thread.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "ha/etcd_client.h"
#include "mooncake_tier/status.h"

namespace mooncake_tier::ha::etcd_json {

// Longest piece of a reply quoted in an error message.
inline constexpr size_t kExcerptBytes = 160;
// A watch message (or a campaign reply) larger than this is not etcd's.
inline constexpr size_t kMaxMessageBytes = 64u << 20;

// `text`, cut to kExcerptBytes (with "..." when cut).
std::string Excerpt(std::string_view text);

// INTERNAL: a reply etcd would not send, quoting an excerpt of it.
Status Malformed(std::string_view what, std::string_view reply);

// RFC 4648 base64 with padding, the gateway's encoding of bytes fields.
std::string Base64Encode(std::string_view bytes);
// nullopt when `text` is not padded base64.
std::optional<std::string> Base64Decode(std::string_view text);

// The smallest key above every key starting with `prefix`; "\0" (all keys
// from the start key on) when there is none, as etcd defines range_end.
std::string PrefixEnd(std::string_view prefix);

// Reads the fields of one reply object the way etcd writes them: int64s as
// strings (plain numbers accepted), bytes as base64, absent fields as 0, ""
// or false. A field of the wrong type does not throw: the reader remembers
// the first such failure as an INTERNAL status and returns a default.
class ReplyReader {
 public:
  // `what` names the call in failure messages ("kv/range").
  ReplyReader(const nlohmann::json& object, std::string_view what);

  int64_t Int(const char* field);
  std::string Bytes(const char* field);
  bool Bool(const char* field);
  std::string Text(const char* field);
  // nullptr when absent.
  const nlohmann::json* Object(const char* field);
  // nullptr, and a failure, when absent.
  const nlohmann::json* RequiredObject(const char* field);
  // Empty when absent.
  const nlohmann::json::array_t& Array(const char* field);

  // Marks the reply malformed for a reason the caller found (the first
  // failure wins).
  void Fail(std::string why);

  const Status& status() const { return status_; }
  bool ok() const { return status_.ok(); }

 private:
  const nlohmann::json* Find(const char* field) const;
  // The field if it is present and `is` holds; nullptr (and a failure when
  // present) otherwise.
  const nlohmann::json* Typed(const char* field,
                              bool (nlohmann::json::*is)() const noexcept,
                              const char* type);

  const nlohmann::json& object_;
  const std::string what_;
  Status status_;
};

// One mvccpb.KeyValue.
Result<KeyValue> ParseKeyValue(const nlohmann::json& object,
                               std::string_view what);

// The reply header's store revision (0 when absent).
Result<int64_t> HeaderRevision(const nlohmann::json& reply,
                               std::string_view what);

// The reason an etcd error maps to, from its gRPC code and message.
ErrorReason ReasonForEtcdError(int code, std::string_view message);

// The Status of an etcd error object, or nullopt when `object` is not one.
// `endpoint` ("host:port") is named in the message.
std::optional<Status> EtcdErrorOf(const nlohmann::json& object,
                                  const std::string& endpoint);

// The Status of an HTTP reply other than 200: etcd's error when the body
// is one, else INTERNAL quoting the body.
Status ErrorReply(int http_status, std::string_view body,
                  const std::string& endpoint);

// The "leader" object of election/resign and election/proclaim.
nlohmann::json LeaderKeyJson(const LeaderKey& leader);

// Turns one line of a watch stream into `*batch`. Fails on an error etcd
// sent, a watch etcd cancelled (NOT_APPLICABLE: a compacted start
// revision) or a malformed message.
Status ParseWatchMessage(std::string_view line, const std::string& endpoint,
                         WatchBatch* batch);

}  // namespace mooncake_tier::ha::etcd_json
