#include "ha/etcd_json.h"

#include <array>
#include <charconv>
#include <limits>
#include <utility>

namespace mooncake_tier::ha::etcd_json {

using nlohmann::json;

std::string Excerpt(std::string_view text) {
  if (text.size() <= kExcerptBytes) return std::string(text);
  return std::string(text.substr(0, kExcerptBytes)) + "...";
}

Status Malformed(std::string_view what, std::string_view reply) {
  return Status(
      ErrorReason::kInternal,
      "malformed etcd reply (" + std::string(what) + "): " + Excerpt(reply));
}

// ---- base64

namespace {

constexpr char kBase64Alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const uint32_t n = uint32_t(uint8_t(bytes[i])) << 16 |
                       uint32_t(uint8_t(bytes[i + 1])) << 8 |
                       uint32_t(uint8_t(bytes[i + 2]));
    out.push_back(kBase64Alphabet[n >> 18]);
    out.push_back(kBase64Alphabet[(n >> 12) & 63]);
    out.push_back(kBase64Alphabet[(n >> 6) & 63]);
    out.push_back(kBase64Alphabet[n & 63]);
  }
  const size_t rest = bytes.size() - i;
  if (rest > 0) {
    uint32_t n = uint32_t(uint8_t(bytes[i])) << 16;
    if (rest == 2) n |= uint32_t(uint8_t(bytes[i + 1])) << 8;
    out.push_back(kBase64Alphabet[n >> 18]);
    out.push_back(kBase64Alphabet[(n >> 12) & 63]);
    out.push_back(rest == 2 ? kBase64Alphabet[(n >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> Base64Decode(std::string_view text) {
  static const std::array<int8_t, 256> kValue = [] {
    std::array<int8_t, 256> table;
    table.fill(-1);
    for (int i = 0; i < 64; ++i) table[uint8_t(kBase64Alphabet[i])] = int8_t(i);
    return table;
  }();
  if (text.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  while (padding < 2 && padding < text.size() &&
         text[text.size() - 1 - padding] == '=') {
    ++padding;
  }
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    const int8_t v = kValue[uint8_t(text[i])];
    if (v < 0) return std::nullopt;
    bits = bits << 6 | uint32_t(v);
    if (++count == 4) {
      out.push_back(char(bits >> 16));
      out.push_back(char(bits >> 8));
      out.push_back(char(bits));
      bits = 0;
      count = 0;
    }
  }
  if (count == 3) {  // one '=': two bytes
    out.push_back(char(bits >> 10));
    out.push_back(char(bits >> 2));
  } else if (count == 2) {  // "==": one byte
    out.push_back(char(bits >> 4));
  } else if (count != 0) {
    return std::nullopt;
  }
  return out;
}

std::string PrefixEnd(std::string_view prefix) {
  std::string end(prefix);
  while (!end.empty() && uint8_t(end.back()) == 0xff) end.pop_back();
  if (end.empty()) return std::string(1, '\0');
  end.back() = char(uint8_t(end.back()) + 1);
  return end;
}

// ---- Replies

ReplyReader::ReplyReader(const json& object, std::string_view what)
    : object_(object), what_(what) {
  if (!object_.is_object()) Fail("not an object");
}

int64_t ReplyReader::Int(const char* field) {
  const json* v = Find(field);
  if (v == nullptr) return 0;
  if (v->is_number_integer() &&
      (!v->is_number_unsigned() ||
       v->get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max()))) {
    return v->get<int64_t>();
  }
  int64_t out = 0;
  if (v->is_string()) {
    const std::string& s = v->get_ref<const std::string&>();
    auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (error == std::errc() && end == s.data() + s.size() && !s.empty()) {
      return out;
    }
  }
  Fail(std::string("'") + field + "' is not an int64");
  return 0;
}

std::string ReplyReader::Bytes(const char* field) {
  const json* v = Typed(field, &json::is_string, "base64");
  if (v == nullptr) return {};
  std::optional<std::string> bytes =
      Base64Decode(v->get_ref<const std::string&>());
  if (!bytes) Fail(std::string("'") + field + "' is not base64");
  return bytes.value_or(std::string());
}

bool ReplyReader::Bool(const char* field) {
  const json* v = Typed(field, &json::is_boolean, "a bool");
  return v != nullptr && v->get<bool>();
}

std::string ReplyReader::Text(const char* field) {
  const json* v = Typed(field, &json::is_string, "a string");
  return v == nullptr ? std::string() : v->get<std::string>();
}

const json* ReplyReader::Object(const char* field) {
  return Typed(field, &json::is_object, "an object");
}

const json* ReplyReader::RequiredObject(const char* field) {
  const json* v = Object(field);
  if (v == nullptr) Fail(std::string("no '") + field + "'");
  return v;
}

const json::array_t& ReplyReader::Array(const char* field) {
  static const json::array_t kEmpty;
  const json* v = Typed(field, &json::is_array, "an array");
  return v == nullptr ? kEmpty : v->get_ref<const json::array_t&>();
}

void ReplyReader::Fail(std::string why) {
  if (status_.ok()) {
    status_ = Malformed(what_ + ": " + why, object_.dump());
  }
}

const json* ReplyReader::Find(const char* field) const {
  if (!object_.is_object()) return nullptr;
  auto it = object_.find(field);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

const json* ReplyReader::Typed(const char* field,
                               bool (json::*is)() const noexcept,
                               const char* type) {
  const json* v = Find(field);
  if (v == nullptr || (v->*is)()) return v;
  Fail(std::string("'") + field + "' is not " + type);
  return nullptr;
}

Result<KeyValue> ParseKeyValue(const json& object, std::string_view what) {
  ReplyReader r(object, what);
  KeyValue kv;
  kv.key = r.Bytes("key");
  kv.value = r.Bytes("value");
  kv.create_revision = r.Int("create_revision");
  kv.mod_revision = r.Int("mod_revision");
  kv.version = r.Int("version");
  kv.lease = r.Int("lease");
  if (!r.ok()) return r.status();
  return kv;
}

Result<int64_t> HeaderRevision(const json& reply, std::string_view what) {
  ReplyReader r(reply, what);
  const json* header = r.Object("header");
  int64_t revision = 0;
  if (header != nullptr) {
    ReplyReader h(*header, what);
    revision = h.Int("revision");
    if (!h.ok()) return h.status();
  }
  if (!r.ok()) return r.status();
  return revision;
}

// ---- etcd's errors. The gateway answers {"error","message","code"} with
// a gRPC code, but the election service reports its errors (even "lease
// not found") as code 2 (Unknown), so a few are known by their message.

ErrorReason ReasonForEtcdError(int code, std::string_view message) {
  if (message.find("lease not found") != std::string_view::npos ||
      message.find("session expired") != std::string_view::npos) {
    return ErrorReason::kObjectNotFound;
  }
  if (message.find("election: not leader") != std::string_view::npos) {
    return ErrorReason::kNotApplicable;
  }
  switch (code) {  // gRPC codes
    case 1:        // CANCELLED
    case 10:       // ABORTED
      return ErrorReason::kAborted;
    case 3:  // INVALID_ARGUMENT
      return ErrorReason::kInvalidArgument;
    case 4:  // DEADLINE_EXCEEDED
      return ErrorReason::kTimeout;
    case 5:  // NOT_FOUND
      return ErrorReason::kObjectNotFound;
    case 6:  // ALREADY_EXISTS
      return ErrorReason::kObjectExists;
    case 7:   // PERMISSION_DENIED
    case 16:  // UNAUTHENTICATED
      return ErrorReason::kUnauthenticated;
    case 8:  // RESOURCE_EXHAUSTED ("database space exceeded")
      return ErrorReason::kNoSpace;
    case 9:   // FAILED_PRECONDITION
    case 11:  // OUT_OF_RANGE (a compacted revision)
      return ErrorReason::kNotApplicable;
    case 14:  // UNAVAILABLE ("no leader", "request timed out")
      return ErrorReason::kUnavailable;
    default:
      return ErrorReason::kInternal;
  }
}

std::optional<Status> EtcdErrorOf(const json& object,
                                  const std::string& endpoint) {
  if (!object.is_object()) return std::nullopt;
  auto error = object.find("error");
  if (error == object.end() || !error->is_string() ||
      error->get_ref<const std::string&>().empty()) {
    return std::nullopt;
  }
  std::string message = error->get<std::string>();
  auto m = object.find("message");
  if (m != object.end() && m->is_string() && !m->get<std::string>().empty()) {
    message = m->get<std::string>();
  }
  int code = 2;
  auto c = object.find("code");
  if (c != object.end() && c->is_number_integer()) code = c->get<int>();
  return Status(ReasonForEtcdError(code, message),
                "etcd at " + endpoint + ": " + message);
}

Status ErrorReply(int http_status, std::string_view body,
                  const std::string& endpoint) {
  const json parsed = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (std::optional<Status> error = EtcdErrorOf(parsed, endpoint)) {
    return *error;
  }
  return Status(ErrorReason::kInternal,
                "etcd at " + endpoint + " answered HTTP " +
                    std::to_string(http_status) + ": " + Excerpt(body));
}

json LeaderKeyJson(const LeaderKey& leader) {
  return {{"name", Base64Encode(leader.name)},
          {"key", Base64Encode(leader.key)},
          {"rev", std::to_string(leader.revision)},
          {"lease", std::to_string(leader.lease)}};
}

// ---- Watches

Status ParseWatchMessage(std::string_view line, const std::string& endpoint,
                         WatchBatch* batch) {
  const json message = json::parse(line, nullptr, false);
  if (std::optional<Status> error = EtcdErrorOf(message, endpoint)) {
    return *error;
  }
  ReplyReader m(message, "watch");
  const json* result = m.RequiredObject("result");
  if (!m.ok()) return m.status();
  ReplyReader r(*result, "watch");
  MT_ASSIGN_OR_RETURN(batch->revision, HeaderRevision(*result, "watch"));
  batch->created = r.Bool("created");
  const bool canceled = r.Bool("canceled");
  const int64_t compacted = r.Int("compact_revision");
  const std::string reason = r.Text("cancel_reason");
  const json::array_t& events = r.Array("events");
  if (!r.ok()) return r.status();
  if (canceled) {
    return Status(ErrorReason::kNotApplicable,
                  compacted > 0 ? "watch start revision compacted (oldest "
                                  "kept: " +
                                      std::to_string(compacted) + ")"
                                : "etcd cancelled the watch: " + reason);
  }
  batch->events.clear();
  for (const json& item : events) {
    ReplyReader e(item, "watch event");
    const std::string type = e.Text("type");
    const json* kv = e.RequiredObject("kv");
    if (type != "" && type != "PUT" && type != "DELETE") e.Fail("type");
    if (!e.ok()) return e.status();
    WatchBatch::Event event;
    event.type = type == "DELETE" ? WatchBatch::Event::Type::kDelete
                                  : WatchBatch::Event::Type::kPut;
    MT_ASSIGN_OR_RETURN(event.kv, ParseKeyValue(*kv, "watch event"));
    batch->events.push_back(std::move(event));
  }
  return Status::Ok();
}

}  // namespace mooncake_tier::ha::etcd_json
