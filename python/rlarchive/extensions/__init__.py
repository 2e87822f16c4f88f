"""The extensions this package supports (spec §5.4, ``spec/extensions/``), and reading their members.

Each supported extension has one member, a JSON text whose top-level value is
an object with exactly one property holding a value (spec §7). Reading it
applies, in order: the JSON rules of §6 (their codes), the value rules of §7
(their codes), the references of §7.6 (``REF_NOT_FOUND``, ``REF_MISMATCH``),
then the extension's own structure (``EXTENSION_INVALID``); every error names
the extension member. Readers do this when the caller asks for the
extension's content; the dump and the validator do it for every used
extension (spec §11.1 step 11, :func:`rlarchive.checks.check_extensions`).
The checks take the :class:`rlarchive.checks.CheckState` after step 8.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import RlarchiveError, members_pointer
from ..tensors import check_reference
from ..values import Checker
from ..zipread import read_json_member
from . import replay_buffer as _replay_buffer
from . import training as _training
from . import vec_normalize as _vec_normalize
from .policy import description as _policy

if TYPE_CHECKING:
    from ..checks import CheckState
    from ..reader import Archive

__all__ = ["Extension", "SUPPORTED", "read_document", "supported_used", "data_of"]


@dataclass(frozen=True)
class Extension:
    """A supported extension: its member, the member's one key, its structural check, and its arrays' tensor group."""

    name: str
    member: str
    key: str
    check: Callable[[Any, Mapping[str, Any] | None, Sequence[str]], object]
    group: str
    #: The rules that read element bytes, after ``check`` (the check state after step 8, the value).
    check_content: Callable[[CheckState, Any], object] | None = None
    #: Its checks read ``data.json`` (its spaces): after ``data.json`` failed, a validator
    #: does not check the extension (spec §11.1 step 11). Every extension defined today does.
    reads_data: bool = True


#: Supported extensions by name, in the order the dump and the validator check them.
SUPPORTED: Mapping[str, Extension] = {
    e.name: e
    for e in (
        Extension(_policy.EXTENSION, _policy.MEMBER, _policy.KEY, _policy.check, _policy.GROUP),
        Extension(
            _vec_normalize.EXTENSION,
            _vec_normalize.MEMBER,
            _vec_normalize.KEY,
            _vec_normalize.check,
            _vec_normalize.GROUP,
            _vec_normalize.check_content,
        ),
        Extension(
            _training.EXTENSION,
            _training.MEMBER,
            _training.KEY,
            _training.check,
            _training.GROUP,
            _training.check_content,
        ),
        Extension(
            _replay_buffer.EXTENSION,
            _replay_buffer.MEMBER,
            _replay_buffer.KEY,
            _replay_buffer.check,
            _replay_buffer.GROUP,
            _replay_buffer.check_content,
        ),
    )
}


def _relocated(e: RlarchiveError, member: str) -> RlarchiveError:
    return RlarchiveError(e.code, e.message, member=member, pointer=e.pointer, offset=e.offset)


def _state_of(holder: Any) -> CheckState:
    """The check state itself, or an open :class:`rlarchive.Archive`'s (its ``state``)."""
    state: CheckState = getattr(holder, "state", holder)
    return state


def read_document(state: CheckState | Archive, name: str) -> Any | None:
    """The checked raw value of a used, supported extension's member, or None when the archive does not use it.

    ``state`` is the :class:`rlarchive.checks.CheckState` after step 8 (an
    open :class:`rlarchive.Archive` is taken for its ``state``). The
    references into a group in its ``failed_groups`` (a validator's) are not
    checked, nor, when there is such a reference, the rules that read element
    bytes (spec §11.1 step 11).

    Raises:
        RlarchiveError: the first broken rule, located in the extension member.
    """
    state = _state_of(state)
    ext = SUPPORTED[name]
    manifest = state.checked_manifest
    if name not in manifest.extensions_used:
        return None
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
    if not isinstance(doc, dict) or list(doc) != [ext.key]:
        raise RlarchiveError(
            "EXTENSION_INVALID",
            f"{ext.member} must be an object with exactly the property {ext.key!r}",
            member=ext.member,
            pointer=members_pointer(doc, "", [ext.key]),
        )
    checker = Checker()
    failed = state.failed_groups
    try:
        checker.check(doc[ext.key], "/" + ext.key)
        for ref in checker.refs:
            if ref.group not in failed:
                check_reference(state.tensor_headers, ref)
    except RlarchiveError as e:
        raise _relocated(e, ext.member) from None
    ext.check(doc[ext.key], data_of(state), manifest.extensions_used)
    if ext.check_content is not None and not any(ref.group in failed for ref in checker.refs):
        ext.check_content(state, doc[ext.key])
    return doc[ext.key]


def data_of(state: CheckState) -> Mapping[str, Any]:
    """The raw ``data`` object of ``data.json`` after step 7 ({} when step 7 failed or did not run)."""
    return {} if state.document is None else state.document["data"]


def supported_used(state: CheckState | Archive) -> list[str]:
    """The extensions the archive uses that this package supports, in the order of ``extensions_used``."""
    return [name for name in _state_of(state).checked_manifest.extensions_used if name in SUPPORTED]
