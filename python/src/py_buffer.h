#pragma once

// A Python object's memory (PEP 3118 buffer protocol) held for as long as
// the binding needs it: the exporter (bytes, bytearray, memoryview, numpy
// array, ...) cannot free, move or resize it while a PyBufferView exists, so
// a store call may use the bytes with the GIL released.
//
// Only C-contiguous memory is accepted: the store moves one contiguous
// range, and the bytes of a C-contiguous array are its elements in index
// order. Anything else (a strided view, a Fortran-ordered array, a
// read-only object where one is written) is INVALID_ARGUMENT with a message
// saying which, raised before the store sees the call.
//
// Thread safety: construct and destroy with the GIL held; bytes() may be
// used without it.

#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <span>
#include <string_view>

namespace mooncake_tier::python {

class PyBufferView {
 public:
  enum class Access { kRead, kWrite };

  // Views `obj`. Throws StatusError (INVALID_ARGUMENT) naming `what`
  // ("data", "buffer") when `obj` has no buffer, is not C-contiguous, or is
  // read-only and kWrite was asked. REQUIRES: GIL held.
  PyBufferView(pybind11::handle obj, Access access, std::string_view what);
  ~PyBufferView();  // REQUIRES: GIL held

  PyBufferView(PyBufferView&& other) noexcept;
  PyBufferView& operator=(PyBufferView&&) = delete;
  PyBufferView(const PyBufferView&) = delete;
  PyBufferView& operator=(const PyBufferView&) = delete;

  std::span<std::byte> bytes() const {
    return {static_cast<std::byte*>(view_.buf), static_cast<size_t>(view_.len)};
  }
  // The viewed object.
  pybind11::handle object() const { return view_.obj; }

 private:
  Py_buffer view_{};
  bool held_ = false;
};

}  // namespace mooncake_tier::python
