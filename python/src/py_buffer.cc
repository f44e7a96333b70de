#include "python/src/py_buffer.h"

#include <string>

#include "python/src/status_error.h"

namespace py = pybind11;

namespace mooncake_tier::python {

PyBufferView::PyBufferView(py::handle obj, Access access,
                           std::string_view what) {
  const std::string name(what);
  if (!PyObject_CheckBuffer(obj.ptr())) {
    ThrowInvalidArgument(name +
                         " must support the buffer protocol "
                         "(bytes, bytearray, memoryview, numpy array), not " +
                         std::string(Py_TYPE(obj.ptr())->tp_name));
  }
  const int flags =
      PyBUF_C_CONTIGUOUS | (access == Access::kWrite ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(obj.ptr(), &view_, flags) == 0) {
    held_ = true;
    return;
  }
  PyErr_Clear();
  // Say which requirement failed: writability is checked on a second,
  // read-only request.
  if (access == Access::kWrite &&
      PyObject_GetBuffer(obj.ptr(), &view_, PyBUF_C_CONTIGUOUS) == 0) {
    PyBuffer_Release(&view_);
    ThrowInvalidArgument(name +
                         " is read-only; get_into needs a writable "
                         "buffer (bytearray, numpy array, ...)");
  }
  PyErr_Clear();
  ThrowInvalidArgument(name +
                       " is not C-contiguous; pass a contiguous "
                       "array (numpy.ascontiguousarray) or bytes");
}

PyBufferView::PyBufferView(PyBufferView&& other) noexcept
    : view_(other.view_), held_(other.held_) {
  other.held_ = false;
  other.view_ = {};
}

PyBufferView::~PyBufferView() {
  if (held_) PyBuffer_Release(&view_);
}

}  // namespace mooncake_tier::python
