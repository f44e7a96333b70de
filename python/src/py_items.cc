#include "python/src/py_items.h"

#include <cstdint>

#include "python/src/status_error.h"

namespace py = pybind11;

namespace mooncake_tier::python {
namespace {

uint32_t ToGroupNumber(py::handle obj, const char* what) {
  if (!PyLong_Check(obj.ptr())) {
    throw py::type_error(std::string(what) + " must be an int");
  }
  const long long v = PyLong_AsLongLong(obj.ptr());
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    ThrowInvalidArgument(std::string(what) + " is out of range");
  }
  if (v < 0 || v > UINT32_MAX) {
    ThrowInvalidArgument(std::string(what) + " must be in [0, 2^32), got " +
                         std::to_string(v));
  }
  return static_cast<uint32_t>(v);
}

// A list or tuple, not a buffer: the parts of one object.
bool IsPartList(py::handle obj) {
  return PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr());
}

uint64_t ToUnsigned(py::handle obj, const char* what) {
  if (!PyLong_Check(obj.ptr())) {
    throw py::type_error(std::string(what) + " must be an int, not " +
                         Py_TYPE(obj.ptr())->tp_name);
  }
  const unsigned long long v = PyLong_AsUnsignedLongLong(obj.ptr());
  if (v == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    ThrowInvalidArgument(std::string(what) + " must be in [0, 2^64)");
  }
  return v;
}

void CheckCount(size_t keys, size_t got, const char* what) {
  if (got != keys) {
    ThrowInvalidArgument("got " + std::to_string(keys) + " keys but " +
                         std::to_string(got) + " " + what);
  }
}

// Appends views of `value` (a buffer, or a list / tuple of buffers) and
// returns their spans.
std::vector<std::span<std::byte>> ViewParts(py::handle value,
                                            PyBufferView::Access access,
                                            const char* what,
                                            std::deque<PyBufferView>& views) {
  std::vector<std::span<std::byte>> parts;
  if (!IsPartList(value)) {
    parts.push_back(views.emplace_back(value, access, what).bytes());
    return parts;
  }
  for (py::handle part : Items(value, what)) {
    parts.push_back(views.emplace_back(part, access, what).bytes());
  }
  if (parts.empty()) {
    ThrowInvalidArgument(std::string(what) + " has no parts");
  }
  return parts;
}

// The memory ranges of item `i`: an address and a size, or equal-length
// lists of them.
std::vector<std::span<std::byte>> MemoryParts(py::handle address,
                                              py::handle size) {
  std::vector<std::span<std::byte>> parts;
  if (!IsPartList(address) && !IsPartList(size)) {
    parts.push_back(ToMemory(address, size));
    return parts;
  }
  if (!IsPartList(address) || !IsPartList(size)) {
    ThrowInvalidArgument(
        "an item's addresses and sizes must both be ints or both be lists");
  }
  std::vector<py::handle> a = Items(address, "addresses");
  std::vector<py::handle> s = Items(size, "sizes");
  if (a.size() != s.size() || a.empty()) {
    ThrowInvalidArgument("an item has " + std::to_string(a.size()) +
                         " addresses and " + std::to_string(s.size()) +
                         " sizes; give the same number, at least one");
  }
  for (size_t p = 0; p < a.size(); ++p) parts.push_back(ToMemory(a[p], s[p]));
  return parts;
}

void SetGroups(py::handle groups, std::vector<PutItem>& items) {
  if (groups.is_none()) return;
  std::vector<py::handle> group_list = Items(groups, "groups");
  CheckCount(items.size(), group_list.size(), "groups");
  for (size_t i = 0; i < items.size(); ++i) {
    items[i].options.group = ToGroup(group_list[i]);
  }
}

void SetPutValue(PutItem& item, std::vector<std::span<std::byte>> parts,
                 bool gathered) {
  if (!gathered) {
    item.value = parts[0];
    return;
  }
  item.parts.assign(parts.begin(), parts.end());
}

void SetGetBuffer(GetIntoItem& item, std::vector<std::span<std::byte>> parts,
                  bool scattered) {
  if (!scattered) {
    item.buffer = parts[0];
    return;
  }
  item.parts = std::move(parts);
}

// Items of raw memory: key i with the ranges of addresses[i], sizes[i],
// set by `set(item, ranges, several)`.
template <typename Item>
std::vector<Item> FromAddresses(
    py::handle keys, py::handle addresses, py::handle sizes,
    void (*set)(Item&, std::vector<std::span<std::byte>>, bool)) {
  std::vector<std::string> key_list = ToKeys(keys, "keys");
  std::vector<py::handle> address_list = Items(addresses, "addresses");
  std::vector<py::handle> size_list = Items(sizes, "sizes");
  CheckCount(key_list.size(), address_list.size(), "addresses");
  CheckCount(key_list.size(), size_list.size(), "sizes");
  std::vector<Item> items(key_list.size());
  for (size_t i = 0; i < key_list.size(); ++i) {
    items[i].key = std::move(key_list[i]);
    set(items[i], MemoryParts(address_list[i], size_list[i]),
        IsPartList(address_list[i]));
  }
  return items;
}

}  // namespace

// The items of a list or tuple. A lone str/bytes is refused: iterating it
// would turn "key" into the keys "k", "e", "y".
std::vector<py::handle> Items(py::handle seq, const char* what) {
  if (PyUnicode_Check(seq.ptr()) || PyBytes_Check(seq.ptr()) ||
      !PySequence_Check(seq.ptr())) {
    throw py::type_error(std::string(what) + " must be a list or tuple, not " +
                         Py_TYPE(seq.ptr())->tp_name);
  }
  py::sequence s = py::reinterpret_borrow<py::sequence>(seq);
  std::vector<py::handle> out;
  out.reserve(s.size());
  for (py::handle item : s) out.push_back(item);
  return out;
}

// None, a (group_id, group_size, group_index) tuple or list, or any object
// with those three attributes (mooncake_tier.Group).
std::optional<GroupSpec> ToGroup(py::handle obj) {
  if (obj.is_none()) return std::nullopt;
  py::object id, size, index;
  if (PyTuple_Check(obj.ptr()) || PyList_Check(obj.ptr())) {
    py::sequence s = py::reinterpret_borrow<py::sequence>(obj);
    if (s.size() != 3) {
      ThrowInvalidArgument(
          "group must be (group_id, group_size, group_index), got " +
          std::to_string(s.size()) + " items");
    }
    id = s[0];
    size = s[1];
    index = s[2];
  } else if (py::hasattr(obj, "group_id") && py::hasattr(obj, "group_size") &&
             py::hasattr(obj, "group_index")) {
    id = obj.attr("group_id");
    size = obj.attr("group_size");
    index = obj.attr("group_index");
  } else {
    throw py::type_error(
        "group must be None, a Group or a (group_id, group_size, "
        "group_index) tuple, not " +
        std::string(Py_TYPE(obj.ptr())->tp_name));
  }
  GroupSpec spec;
  spec.group_id = ToKey(id, "group_id");
  spec.group_size = ToGroupNumber(size, "group_size");
  spec.group_index = ToGroupNumber(index, "group_index");
  return spec;
}

std::string ToKey(py::handle obj, const char* what) {
  if (PyUnicode_Check(obj.ptr())) {
    Py_ssize_t size = 0;
    const char* data = PyUnicode_AsUTF8AndSize(obj.ptr(), &size);
    if (data == nullptr) throw py::error_already_set();
    return std::string(data, static_cast<size_t>(size));
  }
  if (PyBytes_Check(obj.ptr())) {
    return std::string(PyBytes_AS_STRING(obj.ptr()),
                       static_cast<size_t>(PyBytes_GET_SIZE(obj.ptr())));
  }
  throw py::type_error(std::string(what) + " must be str or bytes, not " +
                       Py_TYPE(obj.ptr())->tp_name);
}

std::vector<std::string> ToKeys(py::handle seq, const char* what) {
  std::vector<std::string> keys;
  for (py::handle item : Items(seq, what)) keys.push_back(ToKey(item, "key"));
  return keys;
}

std::span<std::byte> ToMemory(py::handle address, py::handle size) {
  const uint64_t a = ToUnsigned(address, "address");
  const uint64_t n = ToUnsigned(size, "size");
  if (a == 0 || n == 0 || a + n < a) {
    ThrowInvalidArgument("memory at address " + std::to_string(a) +
                         " of size " + std::to_string(n) +
                         " is not a valid non-empty range");
  }
  return {reinterpret_cast<std::byte*>(static_cast<uintptr_t>(a)),
          static_cast<size_t>(n)};
}

PreparedPuts PreparePuts(py::handle keys, py::handle values,
                         py::handle groups) {
  PreparedPuts out;
  std::vector<std::string> key_list = ToKeys(keys, "keys");
  std::vector<py::handle> value_list = Items(values, "values");
  CheckCount(key_list.size(), value_list.size(), "values");
  out.items.resize(key_list.size());
  for (size_t i = 0; i < key_list.size(); ++i) {
    out.items[i].key = std::move(key_list[i]);
    SetPutValue(out.items[i],
                ViewParts(value_list[i], PyBufferView::Access::kRead, "data",
                          out.views),
                IsPartList(value_list[i]));
  }
  SetGroups(groups, out.items);
  return out;
}

PreparedGets PrepareGets(py::handle keys, py::handle buffers) {
  PreparedGets out;
  std::vector<std::string> key_list = ToKeys(keys, "keys");
  std::vector<py::handle> buffer_list = Items(buffers, "buffers");
  CheckCount(key_list.size(), buffer_list.size(), "buffers");
  out.items.resize(key_list.size());
  for (size_t i = 0; i < key_list.size(); ++i) {
    out.items[i].key = std::move(key_list[i]);
    SetGetBuffer(out.items[i],
                 ViewParts(buffer_list[i], PyBufferView::Access::kWrite,
                           "buffer", out.views),
                 IsPartList(buffer_list[i]));
  }
  return out;
}

PreparedPuts PreparePutsFromAddresses(py::handle keys, py::handle addresses,
                                      py::handle sizes, py::handle groups) {
  PreparedPuts out;
  out.items = FromAddresses<PutItem>(keys, addresses, sizes, &SetPutValue);
  SetGroups(groups, out.items);
  return out;
}

PreparedGets PrepareGetsFromAddresses(py::handle keys, py::handle addresses,
                                      py::handle sizes) {
  PreparedGets out;
  out.items = FromAddresses<GetIntoItem>(keys, addresses, sizes, &SetGetBuffer);
  return out;
}

}  // namespace mooncake_tier::python
