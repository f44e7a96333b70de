"""Backends that plug mooncake-tier into inference engines' own cache
interfaces, one module per engine. None imports its engine: each is written
against the engine's published interface and, when the engine is installed,
subclasses the engine's base class so its loader accepts it.

- ``mooncake_tier.integrations.sglang``: ``MooncakeTierHiCacheStorage``, an
  SGLang HiCache L3 storage backend (``--hicache-storage-backend dynamic``).
- ``mooncake_tier.integrations.vllm``: ``MooncakeTierStoreWorker``, the
  worker half of a vLLM v1 KV connector backed by the store.
- ``mooncake_tier.integrations.lmcache``: ``MooncakeTierL2Adapter``, an
  LMCache multiprocess L2 adapter (``"type": "plugin"``) on the store's
  native batch queues.

Each module's docstring names the interface version it follows, how to
load it, and what it maps, ignores and refuses. ``address_and_size`` is the
one helper they share: how the engines' memory objects are turned into the
raw addresses the store's zero-copy calls take.
"""

from __future__ import annotations

from typing import Any

__all__ = ["address_and_size", "release"]


def address_and_size(obj: Any) -> tuple[int, int]:
    """Start address and size in bytes of the memory behind ``obj``.

    Understands, in this order: an LMCache ``MemoryObj`` (``data_ptr``
    attribute and ``get_size()``, or only a ``byte_array``), a torch
    tensor (``data_ptr()``, ``numel()``, ``element_size()``; contiguous),
    a numpy array (C-contiguous) and any other buffer. The
    address stays valid only while ``obj`` lives and is not resized.
    Raises ``TypeError`` for anything else and ``ValueError`` for
    non-contiguous memory.
    """
    pointer = getattr(obj, "data_ptr", None)
    get_size = getattr(obj, "get_size", None)
    if pointer is not None and callable(get_size):  # LMCache MemoryObj
        address = pointer() if callable(pointer) else pointer
        return int(address), int(get_size())
    if callable(pointer) and hasattr(obj, "element_size"):  # torch.Tensor
        if not obj.is_contiguous():
            raise ValueError("tensor is not contiguous")
        return int(pointer()), int(obj.numel()) * int(obj.element_size())
    if pointer is None and hasattr(obj, "byte_array"):  # MemoryObj-like
        obj = obj.byte_array
    ctypes_view = getattr(obj, "ctypes", None)
    if ctypes_view is not None and hasattr(obj, "flags"):  # numpy.ndarray
        if not obj.flags["C_CONTIGUOUS"]:
            raise ValueError("array is not C-contiguous")
        return int(ctypes_view.data), int(obj.nbytes)
    try:
        view = memoryview(obj)
    except TypeError:
        raise TypeError(
            f"{type(obj).__name__} has no address: pass a tensor, a numpy "
            "array, an LMCache MemoryObj or a buffer") from None
    import numpy as np  # the buffer's address, without copying it
    if not view.c_contiguous:
        raise ValueError("buffer is not C-contiguous")
    flat = np.frombuffer(view.cast("B"), dtype=np.uint8)
    return int(flat.ctypes.data), int(flat.nbytes)


def release(store: Any, registered: list[int]) -> None:
    """Unregisters every address in ``registered`` (emptying it) and closes
    ``store``: a backend's teardown. Memory the store no longer knows is
    skipped."""
    from ..errors import StoreError
    for address in registered:
        try:
            store.unregister_memory(address)
        except StoreError:
            pass
    registered.clear()
    store.close()
