"""A faster `__init__` for the frozen, slotted dataclasses made once or more per file (spans, frontmatter
entries, memories): a whole-store check makes hundreds of thousands of them.

A frozen dataclass's generated `__init__` sets each field through `object.__setattr__(self, name, value)`,
a generic attribute lookup per field. `quick_init` gives the class an `__init__` with the same signature
and the same result that sets each slot through its own descriptor (twice as fast). Only classes whose
fields all go to `__init__` with plain defaults (no default factories) and no `__post_init__` are
taken: anything else keeps the dataclass's own `__init__`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

T = TypeVar("T")


def quick_init(cls: type[T]) -> type[T]:
    """Give a frozen, slotted dataclass the faster `__init__` (see the module's doc); returns `cls`."""
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    if (
        "__slots__" not in cls.__dict__
        or hasattr(cls, "__post_init__")
        or any(not f.init or f.kw_only or f.default_factory is not dataclasses.MISSING for f in fields)
    ):
        return cls
    scope: dict[str, object] = {}
    params, body = [], []
    for n, f in enumerate(fields):
        scope[f"_set{n}"] = getattr(cls, f.name).__set__
        if f.default is dataclasses.MISSING:
            params.append(f.name)
        else:
            scope[f"_default{n}"] = f.default
            params.append(f"{f.name}=_default{n}")
        body.append(f"    _set{n}(self, {f.name})")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "    pass") + "\n"
    exec(source, scope)  # noqa: S102 - code made here from the class's own field names
    init: Any = scope["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__doc__ = cls.__init__.__doc__
    init.__annotations__ = dict(cls.__init__.__annotations__)
    setattr(cls, "__init__", init)  # noqa: B010 - a method replaced on the class, as dataclass sets it
    return cls
