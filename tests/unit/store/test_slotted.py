"""The quicker `__init__` of the store's frozen, slotted dataclasses makes what the dataclass's own
`__init__` makes, with the same signature, and classes it cannot serve keep their own."""

from __future__ import annotations

import dataclasses
import inspect
import pickle

import pytest

from kin_memory.store.frontmatter import Entry, Frontmatter
from kin_memory.store.memory import Memory
from kin_memory.store.slotted import quick_init
from kin_memory.store.span import Span


def _plain(cls: type) -> type:
    """The same fields as a dataclass of its own (with the dataclass's generated __init__)."""
    spec = [(f.name, f.type, dataclasses.field(default=f.default)) if f.default is not dataclasses.MISSING
            else (f.name, f.type) for f in dataclasses.fields(cls)]  # fmt: skip
    return dataclasses.make_dataclass("Plain" + cls.__name__, spec, frozen=True, slots=True)


SPAN = Span(1, 2, 3, 4)
ENTRY = Entry("workspace", SPAN, Span(1, 11, 1, 20), "/r/alpha", True, True, "/r/alpha")
FRONTMATTER = Frontmatter("ok", 0, 3, (ENTRY,), body_line=4)
CASES = [
    (Span, (1, 2, 3, 4), {}),
    (Span, (), {"line": 1, "col": 2, "end_line": 3, "end_col": 4}),
    (Entry, ("k", SPAN, SPAN, 3, False, True, "3"), {}),
    (Frontmatter, ("ok",), {}),
    (Frontmatter, ("yaml_error", 0, 3), {"error": "bad", "error_span": SPAN, "body_line": 4}),
    (Memory, ("/s/a.md", "/memories/a.md", "t", ("t",), FRONTMATTER, "episodic", "episodic", None, 1.5, 9), {}),
    (Memory, ("/s/a.md", "/memories/a.md", "", (), FRONTMATTER, "episodic", None, "x", 1.5, 9),
     {"compact": True, "kept_title": "A", "key": 7, "decode_error": 3}),
]  # fmt: skip


@pytest.mark.parametrize(("cls", "args", "kwargs"), CASES)
def test_the_quick_init_makes_what_the_dataclass_init_makes(cls: type, args: tuple, kwargs: dict) -> None:
    plain = _plain(cls)
    made, expected = cls(*args, **kwargs), plain(*args, **kwargs)
    assert [getattr(made, f.name) for f in dataclasses.fields(cls)] == [
        getattr(expected, f.name) for f in dataclasses.fields(plain)
    ]
    assert made == cls(*args, **kwargs) and hash(made) == hash(cls(*args, **kwargs))
    assert pickle.loads(pickle.dumps(made)) == made
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.__setattr__(dataclasses.fields(cls)[0].name, None)


@pytest.mark.parametrize("cls", [Span, Entry, Frontmatter, Memory])
def test_the_quick_init_has_the_dataclass_signature(cls: type) -> None:
    assert cls.__init__.__qualname__ == f"{cls.__qualname__}.__init__"
    quick = inspect.signature(cls.__init__)
    assert str(quick) == str(inspect.signature(_plain(cls).__init__)), cls
    with pytest.raises(TypeError):
        cls()  # the fields without a default are still required


def test_classes_the_quick_init_cannot_serve_keep_their_own() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class WithFactory:
        items: list = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, slots=True)
    class WithPostInit:
        a: int

        def __post_init__(self) -> None:
            object.__setattr__(self, "a", self.a + 1)

    @dataclasses.dataclass(frozen=True)
    class NotSlotted:
        a: int

    for cls in (WithFactory, WithPostInit, NotSlotted):
        own = cls.__init__
        assert quick_init(cls).__init__ is own
    assert WithPostInit(1).a == 2
