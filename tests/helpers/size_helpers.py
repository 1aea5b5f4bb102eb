"""The size of a structure in entries, for tests that a structure does not grow."""

from __future__ import annotations

import gc


def held_entries(root: object) -> int:
    """How many entries the containers that ``root`` holds have in all: a deterministic size
    of a structure (numbers count once per place they are held, not per distinct object, so
    the cache of small ints does not hide growth; classes are not followed)."""
    seen: set[int] = set()
    todo = [root]
    entries = 0
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        if isinstance(obj, dict | list | tuple | set | frozenset):
            entries += len(obj)
        todo.extend(gc.get_referents(obj))
    return entries
