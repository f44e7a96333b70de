#pragma once

// Python arguments turned into client batch items, with the memory the
// items point at held for as long as they live.
//
// A value (or a get's buffer) is any C-contiguous buffer-protocol object,
// or a list / tuple of them: the parts of one object, gathered on put and
// scattered on get. The raw-memory forms take addresses and sizes (an int
// each, or equal-length lists of ints), for engines that hand out pointers
// to memory they own; the caller vouches that the memory stays valid.
//
// Every argument is checked with the GIL held, before the store sees
// anything: a bad one raises (TypeError, InvalidArgumentError naming the
// item) and nothing is sent.
//
// Thread safety: build and destroy with the GIL held; the items may be used
// without it while the Prepared object lives.

#include <pybind11/pybind11.h>

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "mooncake_tier/client.h"
#include "python/src/py_buffer.h"

namespace mooncake_tier::python {

struct PreparedPuts {
  std::vector<PutItem> items;
  std::deque<PyBufferView> views;  // what the items' spans point into
};

struct PreparedGets {
  std::vector<GetIntoItem> items;
  std::deque<PyBufferView> views;
};

// `groups`: None, or one group argument (see ToGroup) per key.
PreparedPuts PreparePuts(pybind11::handle keys, pybind11::handle values,
                         pybind11::handle groups);
PreparedGets PrepareGets(pybind11::handle keys, pybind11::handle buffers);
PreparedPuts PreparePutsFromAddresses(pybind11::handle keys,
                                      pybind11::handle addresses,
                                      pybind11::handle sizes,
                                      pybind11::handle groups);
PreparedGets PrepareGetsFromAddresses(pybind11::handle keys,
                                      pybind11::handle addresses,
                                      pybind11::handle sizes);

// A non-empty range of raw memory: INVALID_ARGUMENT for address 0, size 0
// or a range that wraps around.
std::span<std::byte> ToMemory(pybind11::handle address, pybind11::handle size);

// The items of a list or tuple; a lone str / bytes is a TypeError.
std::vector<pybind11::handle> Items(pybind11::handle seq, const char* what);
// Converts a key or group id: str (UTF-8) or bytes. TypeError otherwise.
std::string ToKey(pybind11::handle obj, const char* what);
// Converts a list (or tuple) of keys; a lone str or bytes is a TypeError,
// not a sequence of one-character keys.
std::vector<std::string> ToKeys(pybind11::handle seq, const char* what);
// None, a (group_id, group_size, group_index) tuple or list, or any object
// with those three attributes (mooncake_tier.Group).
std::optional<GroupSpec> ToGroup(pybind11::handle obj);

}  // namespace mooncake_tier::python
