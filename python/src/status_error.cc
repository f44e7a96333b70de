#include "python/src/status_error.h"

namespace py = pybind11;

namespace mooncake_tier::python {

void ThrowIfError(const Status& status) {
  if (!status.ok()) throw StatusError(status);
}

void ThrowInvalidArgument(std::string message) {
  throw StatusError(Status(ErrorReason::kInvalidArgument, std::move(message)));
}

py::object MakePyError(const Status& status) {
  // A lookup in sys.modules once the package is imported; errors are rare
  // enough that caching the function (and its teardown order) is not worth
  // it.
  py::object from_status =
      py::module_::import("mooncake_tier.errors").attr("_from_status");
  return from_status(std::string(ReasonName(status.reason())),
                     std::string(CodeName(status.code())), status.message());
}

void RegisterStatusErrors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    try {
      std::rethrow_exception(p);
    } catch (const StatusError& e) {
      try {
        py::object error = MakePyError(e.status());
        PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())),
                        error.ptr());
      } catch (py::error_already_set& import_failed) {
        // mooncake_tier.errors could not be imported: raise that instead
        // of losing the error.
        import_failed.restore();
      }
    }
  });

  py::dict reasons;
#define MT_PY_REASON(name, wire, code) \
  reasons[wire] = std::string(CodeName(StatusCode::code));
  MOONCAKE_TIER_ERROR_REASONS(MT_PY_REASON)
#undef MT_PY_REASON
  m.attr("REASONS") = reasons;
}

}  // namespace mooncake_tier::python
