#pragma once

// Helpers shared by the batch calls of the server and the stubs, so that no
// handler or stub method carries its own loop over items.
//
// rpc-internal. Thread safety: pure functions.

#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mooncake_tier/status.h"
#include "rpc/status_convert.h"

namespace mooncake_tier::rpc {

template <typename R>
struct ResultValue;
template <typename T>
struct ResultValue<Result<T>> {
  using type = T;
};

// Decodes every item of a request with `decode` (item -> Result<T>), runs
// `call` (span<const T> -> std::vector<R>, one R per item given, R being
// Status or Result<U>) over the items that decoded, and returns one R per
// request item in request order: the call's result, or the item's decoding
// error. INTERNAL for every item if `call` answers with the wrong count.
template <typename Items, typename Decode, typename Call>
auto DecodeAndCall(const Items& items, Decode&& decode, Call&& call) {
  using Item = typename ResultValue<decltype(decode(*items.begin()))>::type;
  using R = typename decltype(call(std::span<const Item>()))::value_type;
  const size_t n = static_cast<size_t>(items.size());
  std::vector<Item> valid;
  std::vector<size_t> positions;
  std::vector<Status> errors(n);
  valid.reserve(n);
  positions.reserve(n);
  size_t i = 0;
  for (const auto& item : items) {
    auto decoded = decode(item);
    if (decoded.ok()) {
      valid.push_back(std::move(*decoded));
      positions.push_back(i);
    } else {
      errors[i] = decoded.status();
    }
    ++i;
  }
  std::vector<R> results;
  if (!valid.empty()) results = call(std::span<const Item>(valid));
  std::vector<R> merged;
  merged.reserve(n);
  if (results.size() != valid.size()) {
    const Status wrong(ErrorReason::kInternal,
                       "the master answered " + std::to_string(results.size()) +
                           " results for " + std::to_string(valid.size()) +
                           " items");
    for (size_t j = 0; j < n; ++j) merged.emplace_back(wrong);
    return merged;
  }
  size_t next = 0;
  for (size_t j = 0; j < n; ++j) {
    if (next < positions.size() && positions[next] == j) {
      merged.push_back(std::move(results[next++]));
    } else {
      merged.emplace_back(std::move(errors[j]));
    }
  }
  return merged;
}

// A reply the stub could not make sense of.
inline Status MalformedReply(const Status& why) {
  return Status(ErrorReason::kInternal,
                "malformed reply from master: " + why.message());
}

// An OK item of a reply without the value it must carry; a malformed reply
// once ItemResults wraps it.
inline Status MissingPayload(const char* what) {
  return Status(ErrorReason::kInvalidArgument,
                std::string(what) + " missing from an OK result");
}

// The error every item of a reply gets when the call failed or the reply
// has the wrong number of results; OK when the reply can be read per item.
inline Status WholeReplyError(const Status& call, size_t results, size_t n) {
  if (!call.ok()) return call;
  if (results == n) return Status::Ok();
  return MalformedReply(
      Status(ErrorReason::kInternal, std::to_string(results) + " results for " +
                                         std::to_string(n) + " items"));
}

// Per-item statuses of a reply.
template <typename ProtoStatuses>
std::vector<Status> ItemStatuses(const Status& call, size_t n,
                                 const ProtoStatuses& results) {
  const Status whole =
      WholeReplyError(call, static_cast<size_t>(results.size()), n);
  if (!whole.ok()) return std::vector<Status>(n, whole);
  std::vector<Status> out;
  out.reserve(n);
  for (const auto& r : results) out.push_back(FromProto(r));
  return out;
}

// Per-item results of a reply whose items carry `status` and a payload:
// `decode(proto_result)` -> Result<T> reads the payload of an OK item; a
// failure there is a malformed reply (INTERNAL).
template <typename T, typename ProtoResults, typename Decode>
std::vector<Result<T>> ItemResults(const Status& call, size_t n,
                                   const ProtoResults& results,
                                   Decode&& decode) {
  std::vector<Result<T>> out;
  out.reserve(n);
  const Status whole =
      WholeReplyError(call, static_cast<size_t>(results.size()), n);
  if (!whole.ok()) {
    for (size_t i = 0; i < n; ++i) out.emplace_back(whole);
    return out;
  }
  for (const auto& r : results) {
    Status status = FromProto(r.status());
    if (!status.ok()) {
      out.emplace_back(std::move(status));
      continue;
    }
    Result<T> value = decode(r);
    if (value.ok()) {
      out.push_back(std::move(value));
    } else {
      out.emplace_back(MalformedReply(value.status()));
    }
  }
  return out;
}

}  // namespace mooncake_tier::rpc
