"""The tagged value model of spec §7: decoding to Python, canonical form, encoding (the checking is
:mod:`rlarchive.value_check`, re-exported here).

Decoded Python types:

==================  =====================================================
value               Python
==================  =====================================================
null/bool/str       ``None``/``bool``/``str``
integer             ``int`` (any size)
float               ``float`` (incl. nan, ±inf, -0.0)
list / map          ``list`` / ``dict``
tuple / bytes       ``tuple`` / ``bytes``
dict (any keys)     ``dict``
ndarray             ``numpy.ndarray`` (read-only view when referenced), or
                    :class:`~rlarchive.tensors.RawTensor` for BF16/FP8
scalar              NumPy scalar (``numpy.float32(...)``), or RawTensor
space               gymnasium space or :mod:`rlarchive.spaces` dataclass
schedule            :mod:`rlarchive.schedules` callable
class               :class:`ClassRef` (never imported by default)
opaque              :class:`Opaque` (never unpickled by default)
==================  =====================================================
"""

from __future__ import annotations

import base64
import math
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import schedules, spaces
from .dtypes import DTYPES, numpy_view_dtype
from .errors import RlarchiveError, esc
from .limits import MAX_ELEMENT_BYTES, MAX_INT_DIGITS, MAX_JSON_DEPTH, MAX_SAFE_INTEGER
from .tensors import RawTensor, as_tensor, check_tensor_name, is_tensor
from .value_check import IDENT_PATH, NONFINITE, Checker, Ref, key_identity

__all__ = [
    "Checker",
    "ClassRef",
    "Decoder",
    "Encoder",
    "Opaque",
    "Ref",
    "TensorRef",
    "canonical",
    "class_allowed",
    "dump_value",
    "key_identity",
    "load_value",
]


def class_allowed(module: str, qualname: str, allow: Iterable[str]) -> bool:
    """Whether an allow-list names the class ``module.qualname``.

    Each entry of ``allow`` is one of:

    - ``"module:Qual.Name"``: exactly that module and qualname;
    - ``"package.module.Class"``: module ``package.module``, qualname ``Class``
      (the last dotted part is the qualname);
    - ``"package.module.*"`` (or ``"package.module:*"``): any class defined
      directly in exactly the module ``package.module``; never a submodule's.

    There is no prefix matching: ``"stable_baselines3.*"`` allows only classes
    defined in the module ``stable_baselines3`` itself.
    """
    for entry in allow:
        if not isinstance(entry, str):
            continue
        if ":" in entry:
            mod, _, qual = entry.partition(":")
        else:
            mod, _, qual = entry.rpartition(".")
        if mod != module:
            continue
        if qual == "*" or qual == qualname:
            return True
    return False


@dataclass(frozen=True)
class ClassRef:
    """A class or function recorded by name. Never imported unless the caller allows its name."""

    module: str
    qualname: str

    @property
    def name(self) -> str:
        """The dotted name ``module.qualname``."""
        return f"{self.module}.{self.qualname}"

    def allowed(self, allow: Iterable[str]) -> bool:
        """Whether ``allow`` names this reference (see :func:`class_allowed`)."""
        return class_allowed(self.module, self.qualname, allow)

    def resolve(self, allow: Iterable[str]) -> Any:
        """Import the module and return the class, if ``allow`` names it.

        The rule (spec §7.8): the reference resolves only when ``allow`` names
        it (:func:`class_allowed`); the module is imported by its exact name;
        each part of the qualname is looked up in the ``__dict__`` of the object
        before it (never through a module attribute, ``__getattr__`` or a
        descriptor), every object on the way after the module is a class, and
        the class found was defined under exactly this module and qualname
        (``__module__`` and ``__qualname__``). A function, a module, an instance
        or a class re-exported from another module is refused.

        Args:
            allow: entries as :func:`class_allowed` takes them.
        Raises:
            RlarchiveError: IMPORT_NOT_ALLOWED naming the reference when it is not
                allowed, cannot be found, or is not a class defined there.
        """
        name = self.name
        if not (IDENT_PATH.fullmatch(self.module) and IDENT_PATH.fullmatch(self.qualname)):
            raise RlarchiveError("IMPORT_NOT_ALLOWED", f"{name!r} is not a plain class name")
        if not self.allowed(allow):
            raise RlarchiveError("IMPORT_NOT_ALLOWED", f"{name} is not in the caller's allow-list")
        import importlib

        try:
            obj: Any = importlib.import_module(self.module)
        except Exception as e:  # ImportError, or an error raised while importing the allowed module
            raise RlarchiveError("IMPORT_NOT_ALLOWED", f"cannot resolve {name}: {type(e).__name__}: {e}") from None
        for part in self.qualname.split("."):
            namespace = getattr(obj, "__dict__", None)
            found = namespace.get(part) if namespace is not None and hasattr(namespace, "get") else None
            if not isinstance(found, type):
                raise RlarchiveError(
                    "IMPORT_NOT_ALLOWED", f"cannot resolve {name}: {part!r} is not a class defined there"
                )
            obj = found
        if obj.__module__ != self.module or obj.__qualname__ != self.qualname:
            raise RlarchiveError(
                "IMPORT_NOT_ALLOWED",
                f"cannot resolve {name}: the class found is {obj.__module__}.{obj.__qualname__}, defined elsewhere",
            )
        return obj

    @classmethod
    def of(cls, obj: Any) -> ClassRef:
        """The reference naming a class or module-level function."""
        return cls(obj.__module__, obj.__qualname__)


@dataclass(frozen=True)
class Opaque:
    """An object only Python can rebuild, kept as a pickle that is never run by default."""

    data: bytes
    type: str | None = None
    note: str | None = None
    format: str = field(default="pickle")

    def unpickle(self, *, trusted: bool = False) -> Any:
        """Run the pickle and return the object. This executes code from the file.

        Raises:
            RlarchiveError: PICKLE_NOT_ALLOWED unless ``trusted=True``.
        """
        if not trusted:
            raise RlarchiveError(
                "PICKLE_NOT_ALLOWED", "unpickling runs code from the file; pass trusted=True to allow it"
            )
        import pickle

        return pickle.loads(self.data)


@dataclass(frozen=True)
class TensorRef:
    """For a writer: an ``ndarray`` value that references a tensor the archive already holds (spec §7.6).

    The writer checks that the tensor exists with exactly this dtype and shape.
    """

    group: str
    name: str
    dtype: str
    shape: tuple[Any, ...]


# ---------------------------------------------------------------- canonical form (spec §13.2)


def canonical(v: Any) -> Any:
    """The canonical form of a checked value: every float as a float tag."""
    if isinstance(v, float):
        if v == 0 and math.copysign(1.0, v) < 0:
            s = "-0"
        else:
            from .jsonstrict import es6_number

            s = es6_number(v)
        return {"$type": "float", "value": s}
    if isinstance(v, list):
        return [canonical(x) for x in v]
    if isinstance(v, dict):
        return {k: canonical(x) for k, x in v.items()}
    return v


# ---------------------------------------------------------------- decoding


class Decoder:
    """Turns checked values into Python objects.

    Args:
        resolve: ``(group, name) -> array`` for references.
        space_mode: ``"neutral"`` or ``"gymnasium"``.
    """

    def __init__(self, resolve: Callable[[str, str], Any], space_mode: str = "neutral") -> None:
        self.resolve = resolve
        self.space_mode = space_mode

    def decode(self, v: Any) -> Any:
        if v is None or isinstance(v, (bool, str, int, float)):
            return v
        if isinstance(v, list):
            return [self.decode(x) for x in v]
        t = v.get("$type")
        if t is None:
            return {k: self.decode(x) for k, x in v.items()}
        if t == "float":
            return NONFINITE[v["value"]]
        if t == "int":
            return int(v["value"])
        if t == "bytes":
            return base64.b64decode(v["base64"])
        if t == "tuple":
            return tuple(self.decode(x) for x in v["items"])
        if t == "dict":
            return {self.decode(k): self.decode(x) for k, x in v["entries"]}
        if t == "ndarray":
            if "ref" in v:
                return self.resolve(v["ref"]["group"], v["ref"]["name"])
            raw = base64.b64decode(v["base64"])
            a = np.frombuffer(raw, dtype=numpy_view_dtype(v["dtype"])).reshape(v["shape"]).copy()
            return RawTensor(v["dtype"], tuple(v["shape"]), a) if DTYPES[v["dtype"]].numpy is None else a
        if t == "scalar":
            raw = base64.b64decode(v["base64"])
            a = np.frombuffer(raw, dtype=numpy_view_dtype(v["dtype"]))
            return (
                RawTensor(v["dtype"], (), a.reshape(()).copy(), scalar=True)
                if DTYPES[v["dtype"]].numpy is None
                else a[0]
            )
        if t == "space":
            s = spaces.from_json(v, self.decode)
            return spaces.to_gymnasium(s) if self.space_mode == "gymnasium" else s
        if t == "schedule":
            return schedules.from_json(v)
        if t == "class":
            return ClassRef(v["module"], v["qualname"])
        return Opaque(base64.b64decode(v["base64"]), v.get("type"), v.get("note"), v["format"])


# ---------------------------------------------------------------- encoding


class Encoder:
    """Turns Python objects into values, moving large arrays to a tensor group.

    Args:
        group: the tensor group that receives referenced arrays.
        tensors: where referenced arrays are collected (name -> TensorData).
        inline_limit: arrays of at most this many bytes stay inline; ``-1`` references all.
        opaque_fallback: pickle values the model cannot hold, instead of failing.

    Values nested more than ``MAX_JSON_DEPTH`` deep and integers of more than
    ``MAX_INT_DIGITS`` digits raise WRITE_INVALID before any deeper work (a
    reader would reject them, spec §15).
    """

    #: Integers of more bits than this have more than MAX_INT_DIGITS digits.
    _MAX_INT_BITS = math.ceil(MAX_INT_DIGITS * math.log2(10))

    def __init__(self, group: str, tensors: dict[str, Any], inline_limit: int, opaque_fallback: bool = False) -> None:
        self.group = group
        self.tensors = tensors
        self.inline_limit = inline_limit
        self.opaque_fallback = opaque_fallback
        self._depth = 0

    def encode(self, obj: Any, ptr: str, inline: bool = False) -> Any:
        """The value for ``obj`` at the JSON Pointer ``ptr`` (arrays inline if ``inline``)."""
        # Each nested call adds at least one JSON level, so this bounds the recursion
        # early; the exact depth of the text is checked when it is written.
        if self._depth >= MAX_JSON_DEPTH:
            raise RlarchiveError(
                "WRITE_INVALID", f"the value at {ptr} is nested deeper than MAX_JSON_DEPTH ({MAX_JSON_DEPTH})"
            )
        self._depth += 1
        try:
            return self._encode(obj, ptr, inline)
        finally:
            self._depth -= 1

    def _encode(self, obj: Any, ptr: str, inline: bool) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, np.generic):
            return self._scalar(obj, ptr)
        if isinstance(obj, int):
            return obj if abs(obj) <= MAX_SAFE_INTEGER else self._bigint(obj, ptr)
        if isinstance(obj, float):
            if math.isfinite(obj):
                return obj
            return {"$type": "float", "value": "nan" if math.isnan(obj) else ("inf" if obj > 0 else "-inf")}
        if isinstance(obj, list):
            return [self.encode(x, f"{ptr}/{i}") for i, x in enumerate(obj)]
        if isinstance(obj, tuple):
            return {"$type": "tuple", "items": [self.encode(x, f"{ptr}/items/{i}") for i, x in enumerate(obj)]}
        if isinstance(obj, dict):
            if all(isinstance(k, str) for k in obj) and "$type" not in obj:
                return {k: self.encode(x, f"{ptr}/{esc(k)}") for k, x in obj.items()}
            return {
                "$type": "dict",
                "entries": [
                    [self.encode(k, f"{ptr}/entries/{i}/0"), self.encode(x, f"{ptr}/entries/{i}/1")]
                    for i, (k, x) in enumerate(obj.items())
                ],
            }
        if isinstance(obj, (bytes, bytearray, memoryview)):
            return {"$type": "bytes", "base64": base64.b64encode(bytes(obj)).decode("ascii")}
        if isinstance(obj, TensorRef):
            return {
                "$type": "ndarray",
                "dtype": obj.dtype,
                "shape": list(obj.shape),
                "ref": {"group": obj.group, "name": obj.name},
            }
        if isinstance(obj, RawTensor) and obj.scalar:  # what the decoder gives for a scalar of a dtype NumPy lacks
            return self._scalar(obj, ptr)  # type: ignore[arg-type]  # _scalar takes a RawTensor scalar too
        if is_tensor(obj):
            return self._array(obj, ptr, inline)
        if isinstance(obj, spaces.Space):
            return spaces.to_json(obj, self.encode, ptr)
        if spaces.is_gymnasium_space(obj):
            try:
                neutral = spaces.from_gymnasium(obj)
            except TypeError:
                return self._opaque(obj, ptr)
            return spaces.to_json(neutral, self.encode, ptr)
        if isinstance(obj, (schedules.Constant, schedules.Linear, schedules.Piecewise)):
            return schedules.to_json(obj)
        if isinstance(obj, ClassRef):
            return {"$type": "class", "module": obj.module, "qualname": obj.qualname}
        if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)) and IDENT_PATH.fullmatch(
            f"{obj.__module__}.{obj.__qualname__}"
        ):
            return {"$type": "class", "module": obj.__module__, "qualname": obj.__qualname__}
        if isinstance(obj, Opaque):
            out = {"$type": "opaque", "format": obj.format, "base64": base64.b64encode(obj.data).decode("ascii")}
            if obj.type is not None:
                out["type"] = obj.type
            if obj.note is not None:
                out["note"] = obj.note
            return out
        return self._opaque(obj, ptr)

    def _opaque(self, obj: Any, ptr: str) -> dict[str, Any]:
        tname = f"{type(obj).__module__}.{type(obj).__qualname__}"
        if not self.opaque_fallback:
            raise RlarchiveError(
                "VALUE_UNSUPPORTED",
                f"the value model cannot hold a {tname} (at {ptr}); pass opaque_fallback=True to keep it as a pickle",
            )
        try:
            import cloudpickle as pickler
        except ImportError:
            import pickle as pickler
        try:
            data = pickler.dumps(obj)
        except Exception as e:  # pickling user objects can fail in any way
            raise RlarchiveError("VALUE_UNSUPPORTED", f"cannot pickle {tname} at {ptr}: {e}") from None
        return {
            "$type": "opaque",
            "format": "pickle",
            "base64": base64.b64encode(data).decode("ascii"),
            "type": tname,
            "note": "not representable in the value model",
        }

    def _bigint(self, obj: int, ptr: str) -> dict[str, Any]:
        # The size is checked before str(), which refuses more than 4300 digits by default.
        if obj.bit_length() > self._MAX_INT_BITS or len(digits := str(obj).lstrip("-")) > MAX_INT_DIGITS:
            raise RlarchiveError(
                "WRITE_INVALID", f"the integer at {ptr} has more than MAX_INT_DIGITS ({MAX_INT_DIGITS}) digits"
            )
        return {"$type": "int", "value": "-" + digits if obj < 0 else digits}

    def _scalar(self, obj: np.generic, ptr: str) -> dict[str, Any]:
        t = as_tensor(obj)
        return {"$type": "scalar", "dtype": t.dtype, "base64": base64.b64encode(t.data.tobytes()).decode("ascii")}

    def _array(self, obj: Any, ptr: str, inline: bool) -> dict[str, Any]:
        t = as_tensor(obj)
        out: dict[str, Any] = {"$type": "ndarray", "dtype": t.dtype, "shape": list(t.shape)}
        if inline or (self.inline_limit >= 0 and t.nbytes <= self.inline_limit):
            out["base64"] = base64.b64encode(t.data.tobytes()).decode("ascii")
        else:
            name = ptr[1:]  # the JSON Pointer without its leading '/' (lstrip would merge "//x" and "/x")
            check_tensor_name(name)
            self.tensors[name] = t
            out["ref"] = {"group": self.group, "name": name}
        return out


# ---------------------------------------------------------------- standalone values (requests, CLI input)


def load_value(v: Any, ptr: str = "") -> Any:
    """A value given outside an archive (parsed JSON, e.g. an observation): checked, then decoded.

    Arrays must be inline (there is no tensor group to reference).

    Raises:
        RlarchiveError: the value's code (§7), or REF_NOT_FOUND for a reference.
    """
    checker = Checker()
    checker.check(v, ptr)
    if checker.refs:
        r = checker.refs[0]
        raise RlarchiveError(
            "REF_NOT_FOUND",
            f"a value outside an archive cannot reference tensors ({r.group}/{r.name})",
            pointer=r.pointer,
        )
    return Decoder(lambda g, n: None, "neutral").decode(v)


def dump_value(obj: Any) -> Any:
    """A Python object (e.g. an action) as a standalone value, arrays inline (the JSON-ready form of §7).

    NumPy scalars become 0-dimensional ``ndarray`` values (as observations and actions are, Annex A).
    """

    def arrays(x: Any) -> Any:
        if isinstance(x, np.generic):
            return np.asarray(x)
        if isinstance(x, dict):
            return {k: arrays(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return type(x)(arrays(v) for v in x)
        return x

    return Encoder("", {}, MAX_ELEMENT_BYTES).encode(arrays(obj), "", inline=True)
