#pragma once

// The one error type of mooncake-tier. Every expected failure is a value: a
// Status (or a Result<T> carrying either a T or a non-OK Status). A Status has
// a machine-readable ErrorReason (OBJECT_NOT_FOUND, NO_SPACE, ...) from which
// its canonical StatusCode follows; the edges (gRPC, HTTP) map the code once.
//
// Thread safety: values; safe to copy and move across threads.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace mooncake_tier {

// Canonical codes, the same set gRPC and absl use, so the edges map 1:1.
enum class StatusCode : uint8_t {
  kOk = 0,
  kInvalidArgument,
  kNotFound,
  kAlreadyExists,
  kFailedPrecondition,
  kResourceExhausted,
  kUnavailable,
  kDeadlineExceeded,
  kAborted,
  kDataLoss,
  kInternal,
  kUnauthenticated,
};

// X(enumerator, wire name, canonical code). The wire name is what clients,
// logs, the admin API and metrics see; never rename one.
#define MOONCAKE_TIER_ERROR_REASONS(X)                             \
  X(kNone, "OK", kOk)                                              \
  X(kInvalidKey, "INVALID_KEY", kInvalidArgument)                  \
  X(kInvalidSize, "INVALID_SIZE", kInvalidArgument)                \
  X(kInvalidArgument, "INVALID_ARGUMENT", kInvalidArgument)        \
  X(kInvalidGroup, "INVALID_GROUP", kInvalidArgument)              \
  X(kBufferTooSmall, "BUFFER_TOO_SMALL", kInvalidArgument)         \
  X(kObjectNotFound, "OBJECT_NOT_FOUND", kNotFound)                \
  X(kGroupNotFound, "GROUP_NOT_FOUND", kNotFound)                  \
  X(kNodeNotFound, "NODE_NOT_FOUND", kNotFound)                    \
  X(kReplicaNotFound, "REPLICA_NOT_FOUND", kNotFound)              \
  X(kTaskNotFound, "TASK_NOT_FOUND", kNotFound)                    \
  X(kObjectExists, "OBJECT_EXISTS", kAlreadyExists)                \
  X(kObjectBusy, "OBJECT_BUSY", kFailedPrecondition)               \
  X(kObjectLeased, "OBJECT_LEASED", kFailedPrecondition)           \
  X(kObjectNotReady, "OBJECT_NOT_READY", kFailedPrecondition)      \
  X(kGroupIncomplete, "GROUP_INCOMPLETE", kFailedPrecondition)     \
  X(kGroupNotFilling, "GROUP_NOT_FILLING", kFailedPrecondition)    \
  X(kNodeNotAlive, "NODE_NOT_ALIVE", kFailedPrecondition)          \
  X(kNoSpace, "NO_SPACE", kResourceExhausted)                      \
  X(kQueueFull, "QUEUE_FULL", kResourceExhausted)                  \
  X(kUnavailable, "UNAVAILABLE", kUnavailable)                     \
  X(kTimeout, "TIMEOUT", kDeadlineExceeded)                        \
  X(kAborted, "ABORTED", kAborted)                                 \
  X(kChecksumMismatch, "CHECKSUM_MISMATCH", kDataLoss)             \
  X(kTornRecord, "TORN_RECORD", kDataLoss)                         \
  X(kIoError, "IO_ERROR", kInternal)                               \
  X(kInternal, "INTERNAL", kInternal)                              \
  X(kUnauthenticated, "UNAUTHENTICATED", kUnauthenticated)         \
  X(kNotApplicable, "NOT_APPLICABLE", kFailedPrecondition)         \
  X(kFillingGroupsFull, "FILLING_GROUPS_FULL", kResourceExhausted) \
  X(kNotLeader, "NOT_LEADER", kUnavailable)

enum class ErrorReason : uint16_t {
#define MOONCAKE_TIER_REASON_ENUM(name, wire, code) name,
  MOONCAKE_TIER_ERROR_REASONS(MOONCAKE_TIER_REASON_ENUM)
#undef MOONCAKE_TIER_REASON_ENUM
};

// "OBJECT_NOT_FOUND" for ErrorReason::kObjectNotFound.
std::string_view ReasonName(ErrorReason reason);
// The canonical code a reason maps to.
StatusCode ReasonCode(ErrorReason reason);
// "NOT_FOUND" for StatusCode::kNotFound.
std::string_view CodeName(StatusCode code);
// Inverse of ReasonName; kInternal for an unknown name.
ErrorReason ReasonFromName(std::string_view name);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  // Out of line and cold. Every error is built through here, so the
  // compiler treats a branch that ends in an error as unlikely and lays it
  // out (with the message it formats) away from the success path. In a
  // cache simulation that halves the put path's instruction-cache misses;
  // on this project's machines the wall clock did not move
  // (docs/design/groups.md, Cost). Routine errors are cold too:
  // OBJECT_NOT_FOUND on a lookup miss jumps to cold code, which no
  // benchmark here measures.
  [[gnu::cold]] Status(ErrorReason reason, std::string message);

  static Status Ok() { return Status(); }
  // INVALID_ARGUMENT with `message`: the caller's input is wrong.
  [[gnu::cold]] static Status InvalidArgument(std::string message) {
    return Status(ErrorReason::kInvalidArgument, std::move(message));
  }

  bool ok() const { return reason_ == ErrorReason::kNone; }
  ErrorReason reason() const { return reason_; }
  StatusCode code() const { return ReasonCode(reason_); }
  const std::string& message() const { return message_; }

  // "NOT_FOUND/OBJECT_NOT_FOUND: no object 'k'" or "OK".
  std::string ToString() const;

  // Marks a status as deliberately not examined.
  void IgnoreError() const {}

  friend bool operator==(const Status& a, const Status& b) {
    return a.reason_ == b.reason_ && a.message_ == b.message_;
  }

 private:
  ErrorReason reason_ = ErrorReason::kNone;
  std::string message_;
};

// Either a T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<1>, std::move(value)) {}  // NOLINT
  // REQUIRES: !status.ok()
  Result(Status status)
      : v_(std::in_place_index<0>, std::move(status)) {  // NOLINT
    if (std::get<0>(v_).ok()) {
      v_.template emplace<0>(ErrorReason::kInternal,
                             "Result constructed from an OK status");
    }
  }

  bool ok() const { return v_.index() == 1; }
  // OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<0>(v_); }

  // REQUIRES: ok()
  T& value() & { return std::get<1>(v_); }
  const T& value() const& { return std::get<1>(v_); }
  T&& value() && { return std::get<1>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace mooncake_tier

#define MT_STATUS_CONCAT_INNER(a, b) a##b
#define MT_STATUS_CONCAT(a, b) MT_STATUS_CONCAT_INNER(a, b)

// Returns from the enclosing function when `expr` (a Status) is not OK.
#define MT_RETURN_IF_ERROR(expr)                 \
  do {                                           \
    ::mooncake_tier::Status mt_status_ = (expr); \
    if (!mt_status_.ok()) return mt_status_;     \
  } while (false)

// `lhs = value of expr` (a Result<T>), or returns its Status.
#define MT_ASSIGN_OR_RETURN(lhs, expr) \
  MT_ASSIGN_OR_RETURN_IMPL(MT_STATUS_CONCAT(mt_result_, __LINE__), lhs, expr)
#define MT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
