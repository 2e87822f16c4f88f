"""Opening archives: the checks of spec §11.1 (:mod:`rlarchive.checks`), then lazy, zero-copy access."""

from __future__ import annotations

import dataclasses
import hashlib
import mmap
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from . import checks, extensions
from . import metadata as metadata_keys
from .checks import (
    EXTENSION_PREFIX,
    TENSOR_PREFIX,
    TENSOR_SUFFIX,
    CheckState,
    group_of,
    member_of,
)
from .dump import render
from .errors import RlarchiveError
from .sources import Source, SourceInput, open_source
from .tensor_slice import TensorSlice, framework_of, on_device
from .tensors import TensorInfo, view_numpy, view_torch
from .values import Decoder
from .zipprofile import Member
from .zipread import member_chunks as buffer_chunks
from .zipread import read_chunks

if TYPE_CHECKING:
    from .extensions.policy.evaluator import Policy
    from .extensions.replay_buffer import ReplayBufferData
    from .extensions.vec_normalize import Statistics

__all__ = ["Archive", "open_archive", "group_of", "member_of", "TENSOR_PREFIX", "TENSOR_SUFFIX", "EXTENSION_PREFIX"]


def _raise_first(state: CheckState) -> None:
    """Raise the first issue a collecting step found, if any."""
    if state.issues:
        raise state.issues[0]


class Archive:
    """An open archive. Create it with :func:`rlarchive.open`.

    Opening runs the checks of spec §11.1 steps 1-9 (:mod:`rlarchive.checks`:
    the ZIP directory, the manifest, ``data.json`` and the safetensors
    headers) and raises the first broken rule; the archive is then built
    from the checked state (:attr:`state`). Tensor bytes are neither read nor
    verified until asked for: tensors are zero-copy views on a read-only
    memory map; :meth:`verify` checks every CRC-32 and digest (step 10),
    :meth:`check_extensions` the supported extensions (step 11). An
    extension's document is checked once: the archive keeps its checked
    value for the accessors (:meth:`extension_document`).
    """

    def __init__(
        self,
        source: SourceInput,
        *,
        spaces: str = "auto",
        storage_options: Mapping[str, Any] | None = None,
        timeout: float | None = None,
        min_rate: float | None = None,
    ) -> None:
        if spaces not in ("auto", "neutral", "gymnasium"):
            raise ValueError("spaces must be 'auto', 'neutral' or 'gymnasium'")
        path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else f"<{type(source).__name__}>"
        src = open_source(source, storage_options=storage_options, timeout=timeout, min_rate=min_rate)
        try:
            state = checks.run(checks.start(src), *checks.OPEN)
            if state.issues:
                raise state.issues[0]
        except BaseException:
            src.close()
            raise
        self._build(state, path, spaces)

    @classmethod
    def from_state(cls, state: CheckState, *, path: str | None = None, spaces: str = "auto") -> Archive:
        """An archive over a state that has passed steps 1-9 of spec §11.1 (``issues`` empty).

        The archive owns the state's source from then on (:meth:`close` closes it).

        Raises:
            RlarchiveError: the first of the state's issues.
            ValueError: a state before step 9, or an unknown ``spaces``.
        """
        if spaces not in ("auto", "neutral", "gymnasium"):
            raise ValueError("spaces must be 'auto', 'neutral' or 'gymnasium'")
        if state.document is None or state.manifest is None:
            raise ValueError("the state has not passed step 7 (check_data)")
        if state.issues:
            raise state.issues[0]
        ar = cls.__new__(cls)
        ar._build(state, path if path is not None else f"<{type(state.source).__name__}>", spaces)
        return ar

    def _build(self, state: CheckState, path: str, spaces: str) -> None:
        self.path = path
        self._space_mode = spaces
        self._state = state
        self._src = state.source
        self._mmap: Any | None = None
        self._fetched: dict[tuple[int, int], bytes] = {}  # tensor bytes read by range (sources not at hand)
        self._data: dict[str, Any] | None = None
        self._doc: dict[str, Any] = dict(state.document or {"data": {}, "optimizers": {}})
        #: Extension name -> its checked raw value (spec §11.1 step 11), kept once checked.
        self._documents: dict[str, Any] = dict(state.extension_documents)
        #: The warnings and infos the checks found (spec §11.1 steps 6-7), in the order found.
        self.warnings: list[RlarchiveError] = list(state.warnings)
        #: The checked manifest (:class:`rlarchive.manifest.Manifest`).
        self.manifest = state.checked_manifest

    @property
    def state(self) -> CheckState:
        """The checked state (:class:`rlarchive.checks.CheckState`) after spec §11.1 step 9: the
        members, the manifest, the data document, the references and the tensor headers."""
        return self._state

    @property
    def source(self) -> Source:
        """The byte source the archive is read from (:class:`rlarchive.sources.Source`)."""
        return self._state.source

    @property
    def members(self) -> Mapping[str, Member]:
        """The members in ZIP order (name -> :class:`rlarchive.zipprofile.Member`)."""
        return self._state.members

    def verify(self, skip: Iterable[str] = ()) -> None:
        """The deferred checks (spec §11.1 step 10): CRC-32 then digest of every other member.

        ``skip`` names members left unchecked here, for a caller that defers
        their checks until their bytes are used (spec §1.2): ``rlarchive.sb3.load``
        maps a replay buffer's arrays for training without reading them.

        Raises:
            RlarchiveError: the first member, in ZIP order, that fails.
        """
        _raise_first(checks.check_digests(self._state, skip, lambda m: self.member_chunks(m.name)))

    def check_extensions(self) -> None:
        """Spec §11.1 step 11: check the member of every used extension this package supports.

        Raises:
            RlarchiveError: the first broken rule, in the order of ``extensions_used``.
        """
        self._keep(checks.run(self._with_documents(), "extensions"))

    def extension_document(self, name: str) -> Any | None:
        """The checked raw value of the used, supported extension ``name``'s member, or None when
        the archive does not use it (:func:`rlarchive.extensions.read_document`).

        The member is read and checked the first time it is asked for (or by
        :meth:`check_extensions`, :meth:`dump`); the archive keeps the checked
        value, and later calls give it without reading or checking again.

        Raises:
            RlarchiveError: the first broken rule, located in the extension member.
        """
        if name not in self._documents:
            value = extensions.read_document(self._state, name)
            if value is None:
                return None
            self._documents[name] = value
        return self._documents[name]

    def _with_documents(self) -> CheckState:
        """The checked state with the extension documents kept so far (step 11 checks the others)."""
        return dataclasses.replace(self._state, extension_documents=dict(self._documents))

    def _keep(self, state: CheckState) -> CheckState:
        """Keep the extension documents a run of step 11 checked; raise its first issue."""
        _raise_first(state)
        self._documents.update(state.extension_documents)
        return state

    # -- access

    @property
    def format_version(self) -> str:
        """The archive's format version, e.g. ``"1.0"``."""
        return self.manifest.format_version

    @property
    def producer(self) -> dict[str, Any]:
        """``{"name": ..., "version": ...}`` of the software that wrote the archive."""
        return dict(self.manifest.producer)

    @property
    def metadata(self) -> dict[str, Any]:
        """The manifest's free-text metadata (string to string)."""
        return self.manifest.metadata

    @property
    def provenance(self) -> metadata_keys.Provenance:
        """What the metadata says about the training run (spec/metadata.md §1): environment id,
        environments in parallel, timesteps, seed, library versions, wrappers; each None when
        absent or malformed (then :attr:`warnings` holds its ``METADATA_INVALID``)."""
        return metadata_keys.provenance(self.metadata)

    @property
    def evaluations(self) -> list[dict[str, Any]]:
        """The recorded evaluations (spec/metadata.md §3), oldest first; [] when none or malformed."""
        return metadata_keys.evaluations(self.metadata)

    @property
    def groups(self) -> list[str]:
        """Names of the tensor groups, in member order."""
        return list(self._state.tensor_headers)

    @property
    def raw_data(self) -> dict[str, Any]:
        """The checked data document as parsed JSON (``{"data": ..., "optimizers": ...}``)."""
        return self._doc

    @property
    def data(self) -> dict[str, Any]:
        """The algorithm's parameters as Python values (decoded once, on first access)."""
        if self._data is None:
            decoder = self._decoder(self._numpy_ref)
            self._data = {k: decoder.decode(v) for k, v in self._doc["data"].items()}
        return self._data

    @property
    def optimizer_names(self) -> list[str]:
        """Names of the optimizer states in the archive."""
        return list(self._doc["optimizers"])

    def optimizer(self, name: str, framework: str = "numpy") -> dict[str, Any]:
        """An optimizer's state dict; ``framework="torch"`` gives torch tensors, ready for ``load_state_dict``."""
        if name not in self._doc["optimizers"]:
            raise RlarchiveError("TENSOR_NOT_FOUND", f"no optimizer {name!r}")
        resolve = self._numpy_ref if framework == "numpy" else (lambda g, n: self.tensor(g, n, framework))
        result: dict[str, Any] = self._decoder(resolve).decode(self._doc["optimizers"][name])
        return result

    def tensor_info(self, group: str) -> Mapping[str, TensorInfo]:
        """dtype, shape, offset and size of each tensor of a group, in header order: a read-only
        mapping over the checked headers (no copy, so a lookup per tensor costs the same for any group size)."""
        infos = self._state.tensor_headers.get(group)
        if infos is None:
            raise RlarchiveError("TENSOR_NOT_FOUND", f"no tensor group {group!r}")
        return infos

    def _info(self, group: str, name: str) -> TensorInfo:
        """One tensor's header entry (TENSOR_NOT_FOUND when the group or the tensor is not there)."""
        info = self.tensor_info(group).get(name)
        if info is None:
            raise RlarchiveError("TENSOR_NOT_FOUND", f"no tensor {name!r} in group {group!r}")
        return info

    def tensor(self, group: str, name: str, framework: str = "numpy", device: Any = None) -> Any:
        """One tensor, as a zero-copy view (NumPy array, RawTensor, or torch tensor).

        ``framework``: ``"numpy"``/``"np"`` or ``"torch"``/``"pt"``; ``device`` (torch only) moves it there."""
        framework = framework_of(framework, device)
        info = self._info(group, name)
        buf = self._buffer() if self._local else self._range(info.offset, info.nbytes)
        if not self._local:
            info = dataclasses.replace(info, offset=0)
        if framework == "numpy":
            return view_numpy(buf, info)
        return on_device(view_torch(buf, info), device)

    def tensors(self, group: str, framework: str = "numpy", device: Any = None) -> dict[str, Any]:
        """All tensors of a group by name (zero-copy views), with :meth:`tensor`'s ``framework`` and ``device``."""
        return {name: self.tensor(group, name, framework, device) for name in self.tensor_info(group)}

    def tensor_sha256(self, group: str, name: str) -> str:
        """SHA-256 of one tensor's element bytes, as lower-case hex."""
        info = self._info(group, name)
        return hashlib.sha256(self._range(info.offset, info.nbytes)).hexdigest()

    @property
    def extensions_used(self) -> list[str]:
        """The extensions the archive uses (``extensions_used`` of the manifest)."""
        return self.manifest.extensions_used

    def vec_normalize(self) -> Statistics | None:
        """The observation and return normalisation statistics (extension ``RLA_vec_normalize``), or None.

        The extension member is checked first (spec RLA_vec_normalize §5):
        RlarchiveError with its code for a malformed member.
        """
        from .extensions.vec_normalize import from_value

        raw = self.extension_document(extensions.VEC_NORMALIZE)
        if raw is None:
            return None
        return from_value(Decoder(self._numpy_ref, "neutral").decode(raw))

    def replay_buffer(self) -> ReplayBufferData | None:
        """The replay buffer (extension ``RLA_replay_buffer``), or None when the archive has none.

        The member is checked first (spec RLA_replay_buffer §6), reading no
        bytes of the buffer's observations, actions, rewards, dones or
        timeouts; its referenced arrays are then zero-copy views on the
        mapped archive (from a remote source, each is fetched once here).
        """
        from .extensions.replay_buffer import from_value

        raw = self.extension_document(extensions.REPLAY_BUFFER)
        if raw is None:
            return None
        return from_value(self._decoder(self._numpy_ref).decode(raw))

    def policy(self, precision: str = "float64") -> Policy | None:
        """The portable policy (extension ``RLA_policy``), ready to ``predict``, or None when the archive has none.

        It takes raw observations, normalising them itself when the agent was trained behind VecNormalize (the
        Stable-Baselines3 model of the same archive takes them normalised: :meth:`rlarchive.extensions.policy.Policy.normalize_obs`).
        Only NumPy is needed. The description is checked first (spec
        RLA_policy §8); its weights are copied out of the file, so the policy
        stays usable after the archive is closed. ``precision``: the spec's
        ``"float64"`` sums (the default), or ``"float32"`` for faster runs over
        large batches (:class:`rlarchive.extensions.policy.Policy` says how far it strays).
        """
        from .extensions.policy.evaluator import Policy

        raw = self.extension_document(extensions.POLICY)
        if raw is None:
            return None
        copies: dict[tuple[str, str], Any] = {}  # one copy per tensor, however many nodes reference it

        def resolve(group: str, name: str) -> Any:
            if (group, name) not in copies:
                copies[group, name] = self.tensor(group, name).copy()
            return copies[group, name]

        desc = Decoder(resolve, "neutral").decode(raw)
        return Policy(
            desc, vec_normalize=self.vec_normalize() if desc.get("vec_normalize") else None, precision=precision
        )

    def dump(self) -> bytes:
        """The canonical dump (spec §13); performs every deferred check first (spec §11.1 steps 10 and 11,
        each member's bytes read once: step 10 gives the tensors' digests the dump prints)."""
        state = dataclasses.replace(self._with_documents(), digest_tensors=True)
        for phase in checks.DEFERRED:  # stops at the first failure
            state = self._keep(checks.run(state, phase))
        return render(state)

    def _decoder(self, resolve: Callable[[str, str], Any]) -> Decoder:
        mode = self._space_mode
        if mode == "auto":
            try:
                import gymnasium  # noqa: F401

                mode = "gymnasium"
            except ImportError:
                mode = "neutral"
        elif mode == "gymnasium":
            try:
                import gymnasium  # noqa: F401
            except ImportError:
                raise RlarchiveError("FRAMEWORK_UNAVAILABLE", "gymnasium is not installed") from None
        return Decoder(resolve, mode)

    def _numpy_ref(self, group: str, name: str) -> Any:
        return self.tensor(group, name)

    def read_range(self, offset: int, nbytes: int) -> Any:
        """``nbytes`` bytes of the file at ``offset``: a view on the mapped or given bytes when they
        are at hand, else read once by range and kept (a later call for the same range reads nothing)."""
        return self._range(offset, nbytes)

    def member_chunks(self, name: str, chunk: int = 1 << 24) -> Iterator[Any]:
        """The data of member ``name`` in bounded pieces: slices of the local bytes, or range reads.

        Raises:
            RlarchiveError: TENSOR_NOT_FOUND when the archive has no such member.
        """
        m = self._state.members.get(name)
        if m is None:
            raise RlarchiveError("TENSOR_NOT_FOUND", f"no member {name!r}")
        return self._chunks(m, chunk)

    @property
    def _local(self) -> bool:
        """Whether the bytes are at hand (a mapped file, the caller's bytes, or already read whole)."""
        return self._src.mappable or self._src.in_memory or self._mmap is not None

    def _range(self, offset: int, nbytes: int) -> Any:
        """``nbytes`` bytes of the file at ``offset``: a view when local, else read once by range and kept."""
        if self._local:
            return memoryview(self._buffer())[offset : offset + nbytes]
        key = (offset, nbytes)
        got = self._fetched.get(key)
        if got is None:
            got = self._fetched[key] = self._src.read(offset, nbytes)
        return got

    def _chunks(self, m: Member, chunk: int = 1 << 24) -> Iterator[Any]:
        """A member's data in bounded pieces: slices of the local bytes, or range reads."""
        if self._local:
            yield from buffer_chunks(self._buffer(), m, chunk)
        else:
            yield from read_chunks(self._src, m, chunk)

    def _buffer(self) -> Any:
        """The archive's bytes as one buffer: a read-only memory map of a local
        file, the caller's bytes without a copy, or (a file object, a URL) the
        bytes read once, on first use."""
        if self._mmap is None:
            src = self._src
            if src.mappable and src.size > 0:
                self._mmap = mmap.mmap(src.fileno(), 0, access=mmap.ACCESS_READ)
            elif src.in_memory:
                self._mmap = src.view()  # type: ignore[attr-defined]
            else:
                self._mmap = src.read(0, src.size)
        return self._mmap

    @property
    def bytes_read(self) -> int:
        """Bytes read through positional reads so far (tensor views are not reads)."""
        return self._src.bytes_read

    def close(self) -> None:
        """Release the file. Tensor views must not be used afterwards."""
        self._fetched = {}
        if isinstance(self._mmap, mmap.mmap):
            try:
                self._mmap.close()
            except BufferError:
                pass  # views still alive keep the map; it closes when they go
        self._mmap = None
        self._src.close()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<rlarchive.Archive {self.path!r} v{self.format_version} groups={self.groups}>"

    def get_slice(self, group: str, name: str, framework: str = "numpy", device: Any = None) -> TensorSlice:
        """One tensor for partial reads, as safetensors' ``get_slice``: ``.shape``, ``.dtype``, and
        ``[...]`` by integers, slices and ``...``, reading only ranges of the tensor's bytes, in a bounded
        number of requests that read a bounded amount beyond the selection (spec §11.4,
        :func:`rlarchive.tensor_slice.plan_ranges`). ``framework`` and ``device`` as for :meth:`tensor`."""
        info = self._info(group, name)
        return TensorSlice(info, self._range if self._local else self._src.read, framework, device)


def open_archive(
    source: SourceInput,
    *,
    spaces: str = "auto",
    storage_options: Mapping[str, Any] | None = None,
    timeout: float | None = None,
    min_rate: float | None = None,
) -> Archive:
    """Open and check an archive (see :class:`Archive`).

    Args:
        source: a path, ``bytes``/``bytearray``/``memoryview``, a seekable
            binary file object, a URL (``https://``, ``s3://``... through
            fsspec), or a :class:`rlarchive.sources.Source`
            (:func:`rlarchive.sources.open_source`).
        spaces: ``"auto"``, ``"neutral"`` or ``"gymnasium"``.
        storage_options: passed to fsspec for a URL.
        timeout: for an http(s) URL, the seconds a request may wait for its
            connection or its next byte (default 30); see spec §11.4.
        min_rate: for an http(s) URL, bytes per second: a request for ``n``
            bytes has ``timeout + n / min_rate`` seconds in all (default 65536).

    Raises:
        RlarchiveError: the file's first broken rule; ``IO_TIMEOUT`` when an
            http(s) server does not deliver in time.
    """
    return Archive(source, spaces=spaces, storage_options=storage_options, timeout=timeout, min_rate=min_rate)
