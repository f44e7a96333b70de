"""mooncake_tier: Python client of the mooncake-tier KV-cache store.

Quick start (a store must be running, e.g. ``mooncake-tierd standalone``)::

    import numpy as np
    import mooncake_tier as mt

    with mt.Store("127.0.0.1:50051") as store:
        store.put("layer0/block42", np.arange(1024, dtype=np.float16))
        out = np.empty(1024, dtype=np.float16)
        n = store.get_into("layer0/block42", out)   # zero-copy, returns bytes read

        # Pipeline ranks each put their slice into one group; a reader
        # checks completeness before fetching.
        store.put("blk7/rank0", b"...", group=mt.Group("blk7", 2, 0))
        info = store.exists("blk7/rank0")   # info.state == "filling", present=1

See ``help(mooncake_tier.Store)`` and python/README.md.
"""

from __future__ import annotations

from typing import NamedTuple

# errors first: the compiled module builds its exceptions from it.
from .errors import *  # noqa: F401,F403
from .errors import __all__ as _error_names
from ._native import (  # noqa: F401
    BatchQueue,
    ExistsInfo,
    GroupInfo,
    GroupMember,
    GroupStatus,
    PrefixInfo,
    Store,
)


class Group(NamedTuple):
    """Membership of an object in a group: ``group_size`` objects put with
    the same ``group_id`` and distinct ``group_index`` in [0, group_size)
    form one unit that the store reports (``exists``), evicts, offloads and
    expires together. A plain ``(group_id, group_size, group_index)`` tuple
    is accepted wherever a Group is."""

    group_id: str
    group_size: int
    group_index: int


# help() and reprs name the package users import, not the compiled module.
for _cls in (Store, BatchQueue, PrefixInfo, ExistsInfo, GroupInfo,
             GroupMember, GroupStatus):
    _cls.__module__ = __name__
del _cls

__version__ = "0.1.0"

__all__ = [
    "Store", "BatchQueue", "Group", "PrefixInfo", "ExistsInfo", "GroupStatus",
    "GroupInfo", "GroupMember",
    *_error_names,
]
