"""The extensions this package supports (spec §5.4, ``spec/extensions/``), and reading their members.

Each supported extension has one member, a JSON text whose top-level value is
an object with exactly one property holding a value (spec §7). Reading it
applies, in order: the JSON rules of §6 (their codes), the value rules of §7
(their codes), the references of §7.6 (``REF_NOT_FOUND``, ``REF_MISMATCH``),
then the extension's own structure (``EXTENSION_INVALID``); every error names
the extension member. Readers do this when the caller asks for the
extension's content; the dump and the validator do it for every used
extension (spec §11.1 step 11, :func:`rlarchive.checks.check_extensions`),
and the writer for every extension value it writes (:func:`check_document`,
over the member's parsed JSON and the tensors it is about to write).
:func:`read_document` takes the :class:`rlarchive.checks.CheckState` after
step 8; the rules that read element bytes take a :class:`Content`.

Each extension has a folder of its own here (the same as in the JavaScript
reader's ``src/extensions/``): :mod:`.policy`, :mod:`.vec_normalize`,
:mod:`.training` and :mod:`.replay_buffer`. This registry names them
(:data:`NAMES`) without importing them: an extension's module is imported the
first time its entry of :data:`SUPPORTED` is read, so that reading a manifest,
which needs the names only, loads no extension's checks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

from ..errors import RlarchiveError, members_pointer
from ..tensors import TensorInfo, check_reference
from ..values import Checker
from ..zipread import read_json_member

if TYPE_CHECKING:
    from ..checks import CheckState
    from ..reader import Archive

__all__ = [
    "Extension",
    "Content",
    "content_of",
    "check_document",
    "NAMES",
    "POLICY",
    "VEC_NORMALIZE",
    "TRAINING",
    "REPLAY_BUFFER",
    "SUPPORTED",
    "read_document",
    "supported_used",
    "data_of",
]

POLICY = "RLA_policy"
VEC_NORMALIZE = "RLA_vec_normalize"
TRAINING = "RLA_training"
REPLAY_BUFFER = "RLA_replay_buffer"
#: The supported extensions, in the order the dump and the validator check them.
NAMES: tuple[str, ...] = (POLICY, VEC_NORMALIZE, TRAINING, REPLAY_BUFFER)


@dataclass(frozen=True)
class Extension:
    """A supported extension: its member, the member's one key, its structural check, and its arrays' tensor group."""

    name: str
    member: str
    key: str
    check: Callable[[Any, Mapping[str, Any] | None, Sequence[str]], object]
    group: str
    #: The rules that read element bytes, after ``check`` (what they read, the value).
    check_content: Callable[[Content, Any], object] | None = None
    #: Its checks read ``data.json`` (its spaces): after ``data.json`` failed, a validator
    #: does not check the extension (spec §11.1 step 11). Every extension defined today does.
    reads_data: bool = True


@dataclass(frozen=True)
class Content:
    """What an extension's rules that read element bytes (``check_content``) read: the raw ``data`` object of
    ``data.json``, and a referenced tensor's element bytes (``tensor_bytes(group, name)``, little-endian, C
    order) or the array over them (``tensor_array(group, name)``, :func:`rlarchive.tensors.view_numpy`).
    A reader's come from the archive (:func:`content_of`), the writer's from the tensors it is about to write."""

    data: Mapping[str, Any]
    tensor_bytes: Callable[[str, str], bytes]
    tensor_array: Callable[[str, str], Any]


def content_of(state: CheckState) -> Content:
    """The :class:`Content` of an archive: its check state after step 8 (the tensors read from its source)."""
    return Content(data_of(state), state.tensor_bytes, state.tensor_array)


def _policy() -> ModuleType:
    from .policy import description

    return description


def _vec_normalize() -> ModuleType:
    from . import vec_normalize

    return vec_normalize


def _training() -> ModuleType:
    from . import training

    return training


def _replay_buffer() -> ModuleType:
    from . import replay_buffer

    return replay_buffer


#: Each supported extension's module of checks, imported when first asked for.
_MODULES: Mapping[str, Callable[[], ModuleType]] = {
    POLICY: _policy,
    VEC_NORMALIZE: _vec_normalize,
    TRAINING: _training,
    REPLAY_BUFFER: _replay_buffer,
}


@cache
def _entry(name: str) -> Extension:
    """An extension's entry, read from its module: ``EXTENSION``, ``MEMBER``, ``KEY``, ``GROUP``, ``check`` and,
    when it has rules that read element bytes, ``check_content``."""
    e = _MODULES[name]()
    if e.EXTENSION != name:
        raise RuntimeError(f"the registry names {name}, its module declares {e.EXTENSION}")
    return Extension(name, e.MEMBER, e.KEY, e.check, e.GROUP, getattr(e, "check_content", None))


class _Supported(Mapping[str, Extension]):
    """Name -> :class:`Extension`, in :data:`NAMES` order; an entry's module is imported when the entry is first read."""

    def __getitem__(self, name: str) -> Extension:
        if name not in _MODULES:
            raise KeyError(name)
        return _entry(name)

    def __contains__(self, name: object) -> bool:
        return name in _MODULES

    def __iter__(self) -> Iterator[str]:
        return iter(NAMES)

    def __len__(self) -> int:
        return len(NAMES)

    def __repr__(self) -> str:
        return f"SUPPORTED{list(NAMES)}"


#: Supported extensions by name, in the order the dump and the validator check them.
SUPPORTED: Mapping[str, Extension] = _Supported()


def _relocated(e: RlarchiveError, member: str) -> RlarchiveError:
    return RlarchiveError(e.code, e.message, member=member, pointer=e.pointer, offset=e.offset)


def _state_of(holder: Any) -> CheckState:
    """The check state itself, or an open :class:`rlarchive.Archive`'s (its ``state``)."""
    state: CheckState = getattr(holder, "state", holder)
    return state


def read_document(state: CheckState | Archive, name: str) -> Any | None:
    """The checked raw value of a used, supported extension's member, or None when the archive does not use it.

    ``state`` is the :class:`rlarchive.checks.CheckState` after step 8: its
    member is read and checked (:func:`check_document`), but when step 11
    has already kept the value (``extension_documents``). An open
    :class:`rlarchive.Archive` gives the value it keeps
    (:meth:`rlarchive.Archive.extension_document`: checked once). The
    references into a group in the state's ``failed_groups`` (a validator's)
    are not checked, nor, when there is such a reference, the rules that
    read element bytes (spec §11.1 step 11).

    Raises:
        RlarchiveError: the first broken rule, located in the extension member.
    """
    if not hasattr(state, "checked_manifest"):  # an open Archive: the values it keeps, each checked once
        return state.extension_document(name)
    state = cast("CheckState", state)
    ext = SUPPORTED[name]
    manifest = state.checked_manifest
    if name not in manifest.extensions_used:
        return None
    if name in state.extension_documents:
        return state.extension_documents[name]
    for other in state.members:
        if other.startswith(f"extensions/{name}/") and other != ext.member:
            raise RlarchiveError(
                "EXTENSION_INVALID", f"{other} is not a member of {name} (its one member is {ext.member})", member=other
            )
    m = state.members.get(ext.member)
    if m is None:
        raise RlarchiveError(
            "EXTENSION_INVALID", f"{name} is used but its member {ext.member} is absent", member=ext.member
        )
    doc = read_json_member(state.source, m)
    return check_document(
        name, doc, state.tensor_headers, content_of(state), manifest.extensions_used, state.failed_groups
    )


def check_document(
    name: str,
    doc: Any,
    headers: Mapping[str, Mapping[str, TensorInfo]],
    content: Content,
    used: Sequence[str],
    failed: frozenset[str] = frozenset(),
) -> Any:
    """Spec §11.1 step 11's rules over the parsed JSON ``doc`` of extension ``name``'s member; its checked raw value.

    In order: the member's one property, the value rules of §7, the
    references of §7.6 against ``headers`` (group -> name -> tensor info;
    none into a group of ``failed``), the extension's ``check`` (with
    ``content.data`` and the extensions ``used``), then, unless a reference
    goes into a failed group, its ``check_content`` (reading ``content``).
    The reader runs them over an archive's member, the writer over the
    member it is about to write.

    Raises:
        RlarchiveError: the first broken rule, located in the extension member.
    """
    ext = SUPPORTED[name]
    if not isinstance(doc, dict) or list(doc) != [ext.key]:
        raise RlarchiveError(
            "EXTENSION_INVALID",
            f"{ext.member} must be an object with exactly the property {ext.key!r}",
            member=ext.member,
            pointer=members_pointer(doc, "", [ext.key]),
        )
    checker = Checker()
    try:
        checker.check(doc[ext.key], "/" + ext.key)
        for ref in checker.refs:
            if ref.group not in failed:
                check_reference(headers, ref)
    except RlarchiveError as e:
        raise _relocated(e, ext.member) from None
    ext.check(doc[ext.key], content.data, used)
    if ext.check_content is not None and not any(ref.group in failed for ref in checker.refs):
        ext.check_content(content, doc[ext.key])
    return doc[ext.key]


def data_of(state: CheckState) -> Mapping[str, Any]:
    """The raw ``data`` object of ``data.json`` after step 7 ({} when step 7 failed or did not run)."""
    return {} if state.document is None else state.document["data"]


def supported_used(state: CheckState | Archive) -> list[str]:
    """The extensions the archive uses that this package supports, in the order of ``extensions_used``."""
    return [name for name in _state_of(state).checked_manifest.extensions_used if name in SUPPORTED]
