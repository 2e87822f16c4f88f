"""A restricted reader for the YAML files of an RL Zoo run (``config.yml``, ``args.yml``, ``env_kwargs.yml``).

The RL Zoo writes these files with PyYAML's default ``yaml.dump``, so they carry
Python tags (``!!python/object/apply:collections.OrderedDict``,
``!!python/tuple``, and in hand-given hyperparameters ``!!python/name:...``).
:func:`load` reads them into plain values (None, bool, int, float, str, list,
dict with string keys) and never builds a Python object a tag names: it
composes the YAML node graph with PyYAML's ``SafeLoader`` (libyaml's
``CSafeLoader`` when PyYAML has it; composing constructs nothing) and walks it with the rules of Annex B.12:

- the standard tags give plain values (``!!timestamp``: its text);
- ``!!python/tuple`` and ``!!python/list`` give arrays, ``!!python/dict`` an
  object; ``!!python/str``, ``!!python/unicode``, ``!!python/int``,
  ``!!python/long``, ``!!python/float``, ``!!python/bool``, ``!!python/none``
  their scalar; ``!!python/object/apply:collections.OrderedDict`` over a
  sequence of [key, value] pairs an object (its only argument is read as data:
  nothing is called);
- every other tag (``!!python/name:X``, ``!!python/module:X``,
  ``!!python/object:X``, ``!!python/object/new:X``, any other
  ``!!python/object/apply:X``, ``!!binary``, ``!!set``, local tags) gives a
  *tagged value*: an object of one member whose key is the tag (``!!`` for
  ``tag:yaml.org,2002:``) and whose value is the node's content read by these
  rules. The name stays a string; nothing is imported or called;
- a float that is not finite, or an integer beyond ±(2^53 − 1), is the tagged
  value of its text (``{"!!float": ".inf"}``), so that the result is a JSON
  text of spec §6.

Bounds (named constants below): the file's size, the nesting depth (counted
after aliases are followed), the number of nodes and the characters of
scalars after alias expansion (a "billion laughs" file stops at the bound).
Every refusal is an :class:`~rlarchive.errors.RlarchiveError`:
``LIMIT_EXCEEDED`` for a bound, ``IMPORT_INVALID`` for a file that is not
YAML or uses what the rules refuse (merge keys ``<<``, a key that is not a
scalar, a key given twice, more than one document). PyYAML is needed
(``FRAMEWORK_UNAVAILABLE`` without it).
"""

from __future__ import annotations

import math
import os
import stat
from typing import Any

from ..errors import RlarchiveError
from ..limits import MAX_SAFE_INTEGER

__all__ = ["load", "loads", "MAX_YAML_BYTES", "MAX_YAML_DEPTH", "MAX_YAML_NODES", "MAX_YAML_CHARS"]

#: Largest YAML file read, in bytes.
MAX_YAML_BYTES = 1 << 20
#: Deepest nesting of sequences and mappings, counted after aliases are followed
#: (a tagged value adds one level in the JSON result, which stays within spec §6's MAX_JSON_DEPTH).
MAX_YAML_DEPTH = 24
#: Most nodes visited while building the result, every alias counting as a copy of what it names.
MAX_YAML_NODES = 100_000
#: Most characters of scalars (and keys) in the result, every alias counting as a copy.
MAX_YAML_CHARS = 4 << 20

_STD = "tag:yaml.org,2002:"
_PY = _STD + "python/"
_ORDERED_DICT = _PY + "object/apply:collections.OrderedDict"
_SCALAR_AS = {  # Python scalar tags read as the standard tag of the same kind
    _PY + "str": _STD + "str",
    _PY + "unicode": _STD + "str",
    _PY + "int": _STD + "int",
    _PY + "long": _STD + "int",
    _PY + "float": _STD + "float",
    _PY + "bool": _STD + "bool",
    _PY + "none": _STD + "null",
}
_SEQUENCES = {_STD + "seq", _PY + "tuple", _PY + "list"}
_MAPPINGS = {_STD + "map", _PY + "dict"}


def _yaml() -> Any:
    try:
        import yaml
    except ImportError:
        raise RlarchiveError(
            "FRAMEWORK_UNAVAILABLE",
            "reading an RL Zoo run's YAML files needs the Python package 'yaml' (PyYAML), which is not installed",
        ) from None
    return yaml


def _short(tag: str) -> str:
    return "!!" + tag[len(_STD) :] if tag.startswith(_STD) else tag


class _Walk:
    """Builds plain values from a composed node graph, within the bounds."""

    def __init__(self, yaml: Any, where: str) -> None:
        self.yaml = yaml
        self.where = where
        self.nodes = 0
        self.chars = 0
        self.scalars = yaml.constructor.SafeConstructor()

    def _limit(self, what: str) -> RlarchiveError:
        return RlarchiveError("LIMIT_EXCEEDED", f"{self.where}: {what}")

    def _bad(self, what: str, node: Any) -> RlarchiveError:
        mark = getattr(node, "start_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        return RlarchiveError("IMPORT_INVALID", f"{self.where}: {what}{at}")

    def _count(self, text: str) -> None:
        self.chars += len(text)
        if self.chars > MAX_YAML_CHARS:
            raise self._limit(
                f"more than {MAX_YAML_CHARS} characters of text once aliases are expanded (MAX_YAML_CHARS)"
            )

    def value(self, node: Any, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > MAX_YAML_NODES:
            raise self._limit(f"more than {MAX_YAML_NODES} nodes once aliases are expanded (MAX_YAML_NODES)")
        if depth > MAX_YAML_DEPTH:
            raise self._limit(f"nested deeper than {MAX_YAML_DEPTH} levels (MAX_YAML_DEPTH)")
        y = self.yaml
        tag = node.tag
        if isinstance(node, y.ScalarNode):
            self._count(node.value)
            std = _SCALAR_AS.get(tag, tag)
            if std in (_STD + "str", _STD + "null", _STD + "bool", _STD + "int", _STD + "float"):
                return self._scalar(node, std)
            if std == _STD + "timestamp":
                return node.value
            if std == _STD + "merge":
                raise self._bad("merge keys (<<) are not read", node)
            return {_short(tag): node.value}
        if isinstance(node, y.SequenceNode):
            if tag == _ORDERED_DICT and self._is_pairs(node):
                return self._pairs([(p.value[0], p.value[1]) for p in node.value[0].value], depth + 1, node)
            items = [self.value(n, depth + 1) for n in node.value]
            return items if tag in _SEQUENCES else {_short(tag): items}
        if isinstance(node, y.MappingNode):
            out = self._pairs(node.value, depth, node)
            return out if tag in _MAPPINGS else {_short(tag): out}
        raise self._bad(f"a node of kind {type(node).__name__}", node)

    def _is_pairs(self, node: Any) -> bool:
        """Whether ``node`` is the one argument of an OrderedDict: a sequence of [key, value] pairs."""
        y = self.yaml
        return (
            len(node.value) == 1
            and isinstance(node.value[0], y.SequenceNode)
            and all(isinstance(p, y.SequenceNode) and len(p.value) == 2 for p in node.value[0].value)
        )

    def _scalar(self, node: Any, tag: str) -> Any:
        y = self.yaml
        try:
            v = self.scalars.construct_object(
                y.ScalarNode(tag, node.value, node.start_mark, node.end_mark, node.style), deep=True
            )
        except (y.YAMLError, ValueError) as e:
            raise self._bad(
                f"a scalar that is not a {tag[len(_STD) :]}: {str(e).splitlines()[0] if str(e) else type(e).__name__}",
                node,
            ) from None
        if isinstance(v, float) and not math.isfinite(v):
            return {"!!float": node.value}
        if isinstance(v, int) and not isinstance(v, bool) and abs(v) > MAX_SAFE_INTEGER:
            return {"!!int": node.value}
        return v

    def _pairs(self, pairs: list[tuple[Any, Any]], depth: int, node: Any) -> dict[str, Any]:
        y = self.yaml
        out: dict[str, Any] = {}
        for k, v in pairs:
            if not isinstance(k, y.ScalarNode):
                raise self._bad("a mapping key that is not a scalar", k)
            if _SCALAR_AS.get(k.tag, k.tag) == _STD + "merge" or v.tag == _STD + "merge":
                raise self._bad("merge keys (<<) are not read", k)
            self.nodes += 1
            self._count(k.value)
            key = k.value
            if key in out:
                raise self._bad(f"the key {key[:60]!r} is given twice", k)
            out[key] = self.value(v, depth + 1)
        return out


def loads(raw: bytes | str, where: str = "YAML") -> Any:
    """Read one YAML document (bytes or text) into plain values by the rules of this module.

    Raises:
        RlarchiveError: LIMIT_EXCEEDED beyond a bound, IMPORT_INVALID for a file that
            is not such YAML, FRAMEWORK_UNAVAILABLE without PyYAML.
    """
    yaml = _yaml()
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    if len(raw) > MAX_YAML_BYTES:
        raise RlarchiveError("LIMIT_EXCEEDED", f"{where}: larger than {MAX_YAML_BYTES} bytes (MAX_YAML_BYTES)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise RlarchiveError("IMPORT_INVALID", f"{where}: not UTF-8 (byte {e.start})") from None
    loader_class = getattr(
        yaml, "CSafeLoader", yaml.SafeLoader
    )  # libyaml's parser when PyYAML has it (same nodes, faster)
    try:
        # First pass over the events alone: the nesting depth, before anything recursive runs.
        depth = events = 0
        for event in yaml.parse(text, Loader=loader_class):
            events += 1
            if events > MAX_YAML_NODES * 2:
                raise RlarchiveError("LIMIT_EXCEEDED", f"{where}: more than {MAX_YAML_NODES} nodes (MAX_YAML_NODES)")
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_YAML_DEPTH:
                    raise RlarchiveError(
                        "LIMIT_EXCEEDED", f"{where}: nested deeper than {MAX_YAML_DEPTH} levels (MAX_YAML_DEPTH)"
                    )
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
        loader = loader_class(text)
        try:
            node = loader.get_single_node()  # composes only: no constructor runs
        finally:
            loader.dispose()
    except yaml.YAMLError as e:
        first = str(e).splitlines()
        if "flow level" in str(e) or "max depth" in str(
            e
        ):  # libyaml's own nesting guard, met before an event reaches the count above
            raise RlarchiveError(
                "LIMIT_EXCEEDED", f"{where}: nested deeper than {MAX_YAML_DEPTH} levels (MAX_YAML_DEPTH)"
            ) from None
        raise RlarchiveError(
            "IMPORT_INVALID",
            f"{where}: not a YAML document this reader takes: {' '.join(s.strip() for s in first[:3])}",
        ) from None
    except RecursionError:  # not reached within MAX_YAML_DEPTH; kept so that nothing escapes as a traceback
        raise RlarchiveError("LIMIT_EXCEEDED", f"{where}: nested too deeply") from None
    if node is None:
        return None
    return _Walk(yaml, where).value(node, 0)


def load(path: str | os.PathLike[str], where: str = "") -> Any:
    """Read the YAML file at ``path`` (a regular file of at most MAX_YAML_BYTES) into plain values.

    Raises:
        RlarchiveError: as :func:`loads`, and IO_ERROR when the file cannot be read.
    """
    shown = where or os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO does not block the open
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise RlarchiveError("IO_ERROR", f"{shown}: not a regular file")
            raw = f.read(MAX_YAML_BYTES + 1)
    except OSError as e:
        raise RlarchiveError("IO_ERROR", f"cannot read {shown}: {e.strerror or e}") from None
    return loads(raw, shown)
