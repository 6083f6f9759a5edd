// python/src/errors.cpp: warpath.Error and its subclasses, one per error code, each also a
// subclass of the built-in exception a Python user would catch for it (ValueError for a parse
// error or a bad argument, OSError for a file that cannot be read, ...). The message is the
// CLI's (file, line and reason); `code` is the code's stable name ("parse_error").
#include <Python.h>
#include <nanobind/stl/string.h>

#include "common.hpp"

namespace warpath::py {
namespace {

struct ErrorType {
  Errc code;
  const char* name;
  PyObject* builtin;  ///< the second base
  const char* doc;
  PyObject* type = nullptr;
};

PyObject* g_error = nullptr;
ErrorType g_types[] = {
    {Errc::kInvalidArgument, "InvalidArgumentError", PyExc_ValueError,
     "An argument warpath cannot take: a wrong dtype or shape, a bad route or rule."},
    {Errc::kParseError, "ParseError", PyExc_ValueError,
     "A file or text warpath cannot read: the message names the file, line and reason."},
    {Errc::kIoError, "IoError", PyExc_OSError,
     "A file that cannot be opened, read or written (the message names it)."},
    {Errc::kNotFound, "NotFoundError", PyExc_LookupError,
     "An unknown engine id, or a route or rule that is not there."},
    {Errc::kNotSupported, "NotSupportedError", PyExc_NotImplementedError,
     "An engine that cannot run here or cannot take this input."},
    {Errc::kNotBuilt, "NotBuiltError", PyExc_NotImplementedError,
     "An engine this build of warpath does not have."},
    {Errc::kCapacity, "CapacityError", PyExc_RuntimeError,
     "An image or table that would exceed its limit."},
    {Errc::kOutOfMemory, "OutOfMemoryError", PyExc_MemoryError, "Memory ran out."},
    {Errc::kCudaError, "CudaError", PyExc_RuntimeError, "The GPU failed a call."},
};

void translate(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const StatusError& e) {
    PyObject* type = g_error;
    for (const ErrorType& t : g_types)
      if (t.code == e.status.code()) type = t.type;
    const std::string& msg = e.status.message();
    PyObject* text  = PyUnicode_DecodeUTF8(msg.data(), Py_ssize_t(msg.size()), "replace");
    PyObject* value = text ? PyObject_CallOneArg(type, text) : nullptr;
    Py_XDECREF(text);
    if (!value) return;  // the failure to build it is the error raised
    const std::string_view code = errc_name(e.status.code());
    PyObject* code_text = PyUnicode_FromStringAndSize(code.data(), Py_ssize_t(code.size()));
    if (code_text) PyObject_SetAttrString(value, "code", code_text);
    Py_XDECREF(code_text);
    PyErr_SetObject(type, value);
    Py_DECREF(value);
  }
}

}  // namespace

void bind_errors(nb::module_& m) {
  g_error = PyErr_NewExceptionWithDoc(
      "warpath.Error",
      "Every error warpath raises: its message names the file, line and reason where there is "
      "one, and `code` is the error's stable name (\"parse_error\", \"io_error\", ...).",
      PyExc_Exception, nullptr);
  if (!g_error) throw nb::python_error();
  m.attr("Error") = nb::steal(g_error);
  Py_INCREF(g_error);  // kept for the translator as long as the module lives
  // `code` on the classes too, so an error raised from Python (or re-raised) has it.
  nb::handle(g_error).attr("code") = "error";
  for (ErrorType& t : g_types) {
    const std::string qual = std::string("warpath.") + t.name;
    PyObject* bases        = PyTuple_Pack(2, g_error, t.builtin);
    t.type = PyErr_NewExceptionWithDoc(qual.c_str(), t.doc, bases, nullptr);
    Py_DECREF(bases);
    if (!t.type) throw nb::python_error();
    m.attr(t.name) = nb::steal(t.type);
    Py_INCREF(t.type);
    const std::string_view code = errc_name(t.code);
    nb::handle(t.type).attr("code") = nb::str(code.data(), code.size());
  }
  nb::register_exception_translator(translate);
}

}  // namespace warpath::py
