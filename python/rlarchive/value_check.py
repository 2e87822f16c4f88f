"""The checker of the tagged value model (spec §7): every value checked in document order.

The checker validates the JSON form of a value (tags, members, limits, dict
keys) and collects its tensor references for step 9; it decodes nothing.
:mod:`rlarchive.values` re-exports :class:`Checker`, :class:`Ref` and
:func:`key_identity`, and holds the decoder and the encoder.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import schedules, spaces
from .dtypes import DTYPES
from .errors import RlarchiveError, esc, members_pointer
from .limits import MAX_ELEMENT_BYTES, MAX_INLINE_ARRAY_BYTES, MAX_INT_DIGITS, MAX_SAFE_INTEGER
from .tensors import check_shape

#: A dotted Python path (``module.name``), as ``class`` values hold.
IDENT_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
_BIGINT = re.compile(r"-?[1-9][0-9]*")
#: The non-finite float tags and their values.
NONFINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def _fail(code: str, msg: str, ptr: str) -> RlarchiveError:
    return RlarchiveError(code, msg, member="data.json", pointer=ptr)


def _b64(s: Any, ptr: str) -> bytes:
    if not isinstance(s, str):
        raise _fail("VALUE_INVALID", "base64 member must be a string", ptr)
    try:
        raw = base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        raise _fail("VALUE_INVALID", "invalid base64", ptr) from None
    if base64.b64encode(raw).decode("ascii") != s:
        raise _fail("VALUE_INVALID", "base64 is not in canonical form", ptr)
    return raw


def _int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass
class Ref:
    """An ndarray reference found while checking (spec §7.6), checked at step 9."""

    pointer: str
    group: str
    name: str
    dtype: str
    shape: list[Any]


class Checker:
    """Checks values in document order and collects tensor references."""

    def __init__(self) -> None:
        self.refs: list[Ref] = []

    def check(self, v: Any, ptr: str) -> None:
        if v is None or isinstance(v, (bool, str, int, float)):
            return
        if isinstance(v, list):
            for i, x in enumerate(v):
                self.check(x, f"{ptr}/{i}")
            return
        if "$type" not in v:
            for k, x in v.items():
                self.check(x, f"{ptr}/{esc(k)}")
            return
        t = v["$type"]
        fn = _TAGS.get(t) if isinstance(t, str) else None
        if fn is None:  # the discriminator is the value at fault (spec §11.2)
            raise _fail("VALUE_UNKNOWN_TYPE", f"unknown value type {str(t)[:60]!r}", ptr + "/$type")
        fn(self, v, ptr)

    def check_map(self, m: dict[str, Any], ptr: str) -> None:
        """Check each property value of a map of names to values: ``data`` and ``optimizers`` (spec §7.1).

        The map itself is not a value, so a property named ``$type`` is a name like any other.
        """
        for k, x in m.items():
            self.check(x, f"{ptr}/{esc(k)}")

    def _members(
        self, v: dict[str, Any], ptr: str, required: set[Any], optional: set[Any] | frozenset[Any] = frozenset()
    ) -> None:
        keys = set(v) - {"$type"}
        if not required <= keys or not keys <= required | optional:
            where = members_pointer(v, ptr, required | optional | {"$type"}, required)
            raise _fail(
                "VALUE_INVALID",
                f"{v['$type']} needs the members {sorted(required)}"
                + (f" and may have {sorted(optional)}" if optional else ""),
                where,
            )

    def _float(self, v: dict[str, Any], ptr: str) -> None:
        self._members(v, ptr, {"value"})
        if not isinstance(v["value"], str) or v["value"] not in NONFINITE:
            raise _fail("VALUE_INVALID", "float value must be 'nan', 'inf' or '-inf'", ptr + "/value")

    def _bigint(self, v: dict[str, Any], ptr: str) -> None:
        self._members(v, ptr, {"value"})
        s = v["value"]
        if not isinstance(s, str) or not _BIGINT.fullmatch(s):
            raise _fail("VALUE_INVALID", "int value must be a decimal string without leading zeros", ptr + "/value")
        if len(s.lstrip("-")) > MAX_INT_DIGITS:
            raise _fail("LIMIT_EXCEEDED", f"int has more than {MAX_INT_DIGITS} digits", ptr + "/value")
        if abs(int(s)) <= MAX_SAFE_INTEGER:
            raise _fail("VALUE_INVALID", "an int within ±(2^53-1) must be a plain JSON integer", ptr + "/value")

    def _bytes(self, v: dict[str, Any], ptr: str) -> None:
        self._members(v, ptr, {"base64"})
        _b64(v["base64"], ptr + "/base64")

    def _tuple(self, v: dict[str, Any], ptr: str) -> None:
        self._members(v, ptr, {"items"})
        if not isinstance(v["items"], list):
            raise _fail("VALUE_INVALID", "tuple items must be an array", ptr + "/items")
        self.check(v["items"], ptr + "/items")

    def _dict(self, v: dict[str, Any], ptr: str) -> None:
        self._members(v, ptr, {"entries"})
        entries = v["entries"]
        if not isinstance(entries, list):
            raise _fail("VALUE_INVALID", "dict entries must be an array", ptr + "/entries")
        seen = set()
        plain = True
        for i, e in enumerate(entries):
            p = f"{ptr}/entries/{i}"
            if not isinstance(e, list) or len(e) != 2:
                raise _fail("VALUE_INVALID", "a dict entry must be a [key, value] array", p)
            self.check(e[0], p + "/0")
            kid = key_identity(e[0])
            if kid is None:
                raise _fail(
                    "VALUE_INVALID",
                    "dict key must be hashable (null, bool, number other than NaN, string, bytes, tuple)",
                    p + "/0",
                )
            if kid in seen:
                raise _fail("VALUE_DUPLICATE_KEY", "dict has this key twice", p + "/0")
            seen.add(kid)
            self.check(e[1], p + "/1")
            if not isinstance(e[0], str) or e[0] == "$type":
                plain = False
        if plain:
            raise _fail("VALUE_INVALID", "a map with only string keys (none '$type') must be a plain object", ptr)

    def _array_common(self, v: dict[str, Any], ptr: str) -> int:
        d = v["dtype"]
        if not isinstance(d, str) or d not in DTYPES:
            raise _fail("VALUE_INVALID", f"unknown dtype {str(d)[:40]!r}", ptr + "/dtype")
        return DTYPES[d].size

    def _ndarray(self, v: dict[str, Any], ptr: str) -> None:
        self._members(v, ptr, {"dtype", "shape"}, {"base64", "ref"})
        if ("base64" in v) == ("ref" in v):
            raise _fail("VALUE_INVALID", "ndarray needs exactly one of base64 and ref", ptr)
        size = self._array_common(v, ptr)
        shape = v["shape"]
        check_shape(shape, ptr + "/shape", _fail)
        nbytes = math.prod(shape) * size
        if nbytes > MAX_ELEMENT_BYTES:
            raise _fail("LIMIT_EXCEEDED", "array larger than MAX_ELEMENT_BYTES", ptr + "/shape")
        if "base64" in v:
            s = v["base64"]
            if isinstance(s, str) and len(s) > 4 * ((MAX_INLINE_ARRAY_BYTES + 2) // 3):
                raise _fail(
                    "LIMIT_EXCEEDED", f"inline array larger than {MAX_INLINE_ARRAY_BYTES} bytes", ptr + "/base64"
                )
            raw = _b64(s, ptr + "/base64")
            if len(raw) > MAX_INLINE_ARRAY_BYTES:
                raise _fail(
                    "LIMIT_EXCEEDED", f"inline array larger than {MAX_INLINE_ARRAY_BYTES} bytes", ptr + "/base64"
                )
            if len(raw) != nbytes:
                raise _fail(
                    "ARRAY_SIZE_MISMATCH",
                    f"{len(raw)} bytes for shape {shape} of {v['dtype']} ({nbytes} expected)",
                    ptr + "/base64",
                )
        else:
            r = v["ref"]
            if not (isinstance(r, dict) and set(r) == {"group", "name"} and all(isinstance(r[k], str) for k in r)):
                where = members_pointer(r, ptr + "/ref", ("group", "name"))
                if isinstance(r, dict) and set(r) == {"group", "name"}:
                    where += "/group" if not isinstance(r["group"], str) else "/name"
                raise _fail("VALUE_INVALID", "ref must be {group, name} of strings", where)
            self.refs.append(Ref(ptr, r["group"], r["name"], v["dtype"], shape))

    def _scalar(self, v: dict[str, Any], ptr: str) -> None:
        self._members(v, ptr, {"dtype", "base64"})
        size = self._array_common(v, ptr)
        raw = _b64(v["base64"], ptr + "/base64")
        if len(raw) != size:
            raise _fail(
                "ARRAY_SIZE_MISMATCH", f"scalar of {v['dtype']} needs {size} bytes, not {len(raw)}", ptr + "/base64"
            )

    def _space(self, v: dict[str, Any], ptr: str) -> None:
        spaces.check(v, ptr, self.check, _fail)

    def _schedule(self, v: dict[str, Any], ptr: str) -> None:
        schedules.check(v, ptr, _fail)

    def _class(self, v: dict[str, Any], ptr: str) -> None:
        self._members(v, ptr, {"module", "qualname"})
        for k in ("module", "qualname"):
            if not isinstance(v[k], str) or not IDENT_PATH.fullmatch(v[k]):
                raise _fail("VALUE_INVALID", f"class {k} must be dotted identifiers", f"{ptr}/{k}")

    def _opaque(self, v: dict[str, Any], ptr: str) -> None:
        self._members(v, ptr, {"format", "base64"}, {"type", "note"})
        if v["format"] != "pickle":
            raise _fail("VALUE_INVALID", "opaque format must be 'pickle'", ptr + "/format")
        _b64(v["base64"], ptr + "/base64")
        for k in ("type", "note"):
            if k in v and not isinstance(v[k], str):
                raise _fail("VALUE_INVALID", f"opaque {k} must be a string", f"{ptr}/{k}")


_TAGS: dict[str, Callable[[Checker, dict[str, Any], str], None]] = {
    "float": Checker._float,
    "int": Checker._bigint,
    "bytes": Checker._bytes,
    "tuple": Checker._tuple,
    "dict": Checker._dict,
    "ndarray": Checker._ndarray,
    "scalar": Checker._scalar,
    "space": Checker._space,
    "schedule": Checker._schedule,
    "class": Checker._class,
    "opaque": Checker._opaque,
}


def key_identity(k: Any) -> Any:
    """A hashable identity for a checked dict key (spec §7.5), or None if not hashable."""
    if k is None:
        return ("null",)
    if isinstance(k, (bool, int, float)):
        return ("num", k)  # Python: False == 0 == 0.0 == -0.0, True == 1 == 1.0
    if isinstance(k, str):
        return ("str", k)
    if isinstance(k, dict):
        t = k.get("$type")
        if t == "int":
            return ("num", int(k["value"]))
        if t == "float":
            return None if k["value"] == "nan" else ("num", NONFINITE[k["value"]])
        if t == "bytes":
            return ("bytes", k["base64"])
        if t == "tuple":
            ids = [key_identity(x) for x in k["items"]]
            return None if any(i is None for i in ids) else ("tuple", tuple(ids))
    return None
