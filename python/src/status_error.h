#pragma once

// How a store Status becomes a Python exception. The binding throws
// StatusError for a failed call; a translator registered once turns it into
// an instance of the class errors.py keeps for the Status's reason
// (ObjectNotFoundError for OBJECT_NOT_FOUND, ...), all subclasses of
// StoreError. The classes live in Python so that they can be subclassed,
// pickled and documented like any other; this side only names the reason.
//
// Thread safety: StatusError is a value. MakePyError and the translator
// need the GIL.

#include <pybind11/pybind11.h>

#include <exception>
#include <string>

#include "mooncake_tier/status.h"

namespace mooncake_tier::python {

class StatusError : public std::exception {
 public:
  // REQUIRES: !status.ok()
  explicit StatusError(Status status)
      : status_(std::move(status)), what_(status_.ToString()) {}

  const Status& status() const { return status_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  Status status_;
  std::string what_;
};

// Throws StatusError unless `status` is OK.
void ThrowIfError(const Status& status);

// Shorthand for bad input detected by the binding itself (wrong length,
// read-only buffer, ...): INVALID_ARGUMENT, which Python sees as
// InvalidArgumentError, a subclass of both StoreError and ValueError.
[[noreturn]] void ThrowInvalidArgument(std::string message);

// An instance (not raised) of the exception class for `status`, for batch
// results that carry one error per item. REQUIRES: GIL held, !status.ok().
pybind11::object MakePyError(const Status& status);

// Registers the StatusError translator and exports REASONS, the wire name
// and canonical code of every reason, so tests can check errors.py maps
// each one.
void RegisterStatusErrors(pybind11::module_& m);

}  // namespace mooncake_tier::python
