"""Opening archives: the checks of spec §11.1 in order, and lazy, zero-copy access."""
from __future__ import annotations

import dataclasses
import hashlib
import mmap
import os
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping, Optional

from . import jsonstrict, manifest as manifest_mod, metadata as metadata_keys
from .errors import RlarchiveError, esc
from .limits import MAX_JSON_BYTES
from .sources import Source, SourceInput, open_source
from .tensor_slice import TensorSlice, framework_of, on_device
from .tensors import TensorInfo, read_group, view_numpy, view_torch
from .values import Checker, Decoder, Ref
from .zipprofile import Member, digests, member_chunks, read_directory

if TYPE_CHECKING:
    from .policy import Policy
    from .replay_buffer import ReplayBufferData
    from .vec_normalize import Statistics

TENSOR_PREFIX = "tensors/"
TENSOR_SUFFIX = ".safetensors"
EXTENSION_PREFIX = "extensions/"
_FIXED = ("mimetype", "manifest.json", "data.json")


def group_of(name: str) -> Optional[str]:
    """The group name of a tensor member name, or None if it is not one."""
    if name.startswith(TENSOR_PREFIX) and name.endswith(TENSOR_SUFFIX) and name.count("/") == 1:
        g = name[len(TENSOR_PREFIX) : -len(TENSOR_SUFFIX)]
        return g if g not in ("", ".", "..") else None  # a group name is a name segment (spec §2.4)
    return None


def member_of(group: str) -> str:
    """The member name of a tensor group."""
    return f"{TENSOR_PREFIX}{group}{TENSOR_SUFFIX}"


def _read_json_member(src: Source, m: Member) -> Any:
    if m.size > MAX_JSON_BYTES:
        raise RlarchiveError("JSON_TOO_LARGE", f"{m.size} bytes exceed MAX_JSON_BYTES", member=m.name, offset=m.data_offset)
    raw = src.read(m.data_offset, m.size)
    import zlib

    if zlib.crc32(raw) != m.crc32:
        raise RlarchiveError("ZIP_CRC_MISMATCH", "CRC-32 does not match the member's data", member=m.name, offset=m.data_offset)
    return raw, jsonstrict.parse(raw, member=m.name, offset=m.data_offset)




class Archive:
    """An open archive. Create it with :func:`rlarchive.open`.

    Opening reads the ZIP directory, the manifest, ``data.json`` and the
    safetensors headers, and checks them (spec §11.1 steps 1-9). Tensor bytes are
    neither read nor verified until asked for: tensors are zero-copy views on a
    read-only memory map; :meth:`verify` checks every CRC-32 and digest.
    """

    def __init__(
        self,
        source: SourceInput,
        *,
        spaces: str = "auto",
        storage_options: Optional[Mapping[str, Any]] = None,
        timeout: Optional[float] = None,
        min_rate: Optional[float] = None,
    ) -> None:
        self._setup(source, spaces, storage_options, timeout, min_rate)
        try:
            self._check_structure()
            self._check_content()
        except BaseException:
            self._src.close()
            raise

    @classmethod
    def _with_checked_structure(
        cls, source: SourceInput, *, spaces: str = "auto", timeout: Optional[float] = None, min_rate: Optional[float] = None
    ) -> "Archive":
        """An archive after steps 1-6 of spec §11.1 only (they raise at the first error); the
        validator (:mod:`rlarchive.validate`) then runs every later check itself, one by one."""
        ar = cls.__new__(cls)
        ar._setup(source, spaces, None, timeout, min_rate)
        try:
            ar._check_structure()
        except BaseException:
            ar._src.close()
            raise
        return ar

    def _setup(
        self,
        source: SourceInput,
        spaces: str,
        storage_options: Optional[Mapping[str, Any]],
        timeout: Optional[float] = None,
        min_rate: Optional[float] = None,
    ) -> None:
        if spaces not in ("auto", "neutral", "gymnasium"):
            raise ValueError("spaces must be 'auto', 'neutral' or 'gymnasium'")
        self.path = os.fspath(source) if isinstance(source, (str, os.PathLike)) else f"<{type(source).__name__}>"
        self._space_mode = spaces
        self._src = open_source(source, storage_options=storage_options, timeout=timeout, min_rate=min_rate)
        self._mmap: Optional[Any] = None
        self._fetched: dict[tuple[int, int], bytes] = {}  # tensor bytes read by range (sources not at hand)
        self._data: Optional[dict] = None
        self.warnings: list[RlarchiveError] = []
        self._doc: dict[str, Any] = {"data": {}, "optimizers": {}}
        self._refs: list[Ref] = []
        self._groups: dict[str, dict[str, TensorInfo]] = {}

    # -- checking, in the order of spec §11.1

    def _check_structure(self) -> None:
        """Steps 1-6: the container, the layout and the manifest."""
        src = self._src
        members = read_directory(src)  # steps 1-4 and the mimetype rule
        self._members = {m.name: m for m in members}
        for req in ("manifest.json", "data.json"):  # step 5
            if req not in self._members:
                raise RlarchiveError("MEMBER_REQUIRED_MISSING", f"required member {req} is absent", member=req)
        for m in members:
            if m.name not in _FIXED and group_of(m.name) is None and not (
                m.name.startswith(EXTENSION_PREFIX) and m.name.count("/") >= 2
            ):
                raise RlarchiveError("MEMBER_UNEXPECTED", f"member {m.name} is not part of the archive layout", member=m.name)
        self._check_manifest(members)  # step 6

    def _check_content(self) -> None:
        """Steps 7-9, stopping at the first error; step 11 (supported extensions)
        runs in dump() and validate(), and when the content is asked for."""
        self._check_data()
        for m in self._group_members():
            self._read_group(m)
        self._check_refs(set())

    def _group_members(self) -> list[Member]:
        """The tensor members, in ZIP order (step 8)."""
        return [m for m in self._members.values() if group_of(m.name) is not None]

    def _read_group(self, m: Member) -> None:
        """Step 8 for one tensor member."""
        self._groups[str(group_of(m.name))] = read_group(self._src, m)

    def _check_manifest(self, members: list[Member]) -> None:
        src = self._src
        _, obj = _read_json_member(src, self._members["manifest.json"])
        self.manifest = manifest_mod.check(obj)
        self.warnings.extend(self.manifest.warnings)
        used = set(self.manifest.extensions_used)
        for m in members:
            if m.name.startswith(EXTENSION_PREFIX) and m.name.split("/")[1] not in used:
                raise RlarchiveError("MEMBER_UNEXPECTED", f"member {m.name} belongs to an extension not in extensions_used", member=m.name)
        listed = self.manifest.members
        for m in members:
            if m.name in ("mimetype", "manifest.json"):
                continue
            if m.name not in listed:
                raise RlarchiveError("MEMBER_UNLISTED", f"member {m.name} is not listed in the manifest", member=m.name)
            if listed[m.name]["size"] != m.size:
                raise RlarchiveError("MEMBER_SIZE_MISMATCH", f"member {m.name} has {m.size} bytes, the manifest says {listed[m.name]['size']}", member=m.name)
        for i, name in enumerate(listed):
            if name not in self._members:
                raise RlarchiveError("MEMBER_MISSING", f"listed member {name} is absent", member="manifest.json", pointer=f"/members/{i}")
        d = self._members["data.json"]
        if digests(self._chunks(d))[1] != listed["data.json"]["sha256"]:
            raise RlarchiveError("MEMBER_DIGEST_MISMATCH", "data.json does not match its SHA-256", member="data.json")

    def _check_data(self) -> None:
        _, doc = _read_json_member(self._src, self._members["data.json"])
        if not isinstance(doc, dict) or not isinstance(doc.get("data"), dict) or not isinstance(doc.get("optimizers", {}), dict):
            where = "" if not isinstance(doc, dict) or "data" not in doc else "/data" if not isinstance(doc["data"], dict) else "/optimizers"
            raise RlarchiveError("DATA_INVALID", "data.json must be an object with a 'data' object and an optional 'optimizers' object", member="data.json", pointer=where)
        for k in doc:
            if k not in ("data", "optimizers"):
                self.warnings.append(RlarchiveError("DATA_UNKNOWN_PROPERTY", f"unknown data.json property {k!r} ignored", member="data.json", pointer="/" + esc(k)))
        checker = Checker()
        checker.check_map(doc["data"], "/data")
        checker.check_map(doc.get("optimizers", {}), "/optimizers")
        self._doc = {"data": doc["data"], "optimizers": doc.get("optimizers", {})}
        self._refs = checker.refs

    def _check_refs(self, failed: set) -> None:
        """Step 9: every reference of data.json (but those into groups that failed to read)."""
        for r in self._refs:
            if r.group not in failed:
                self._check_ref(r)

    def _check_ref(self, ref: Ref) -> None:
        info = self._groups.get(ref.group, {}).get(ref.name)
        if info is None:
            raise RlarchiveError("REF_NOT_FOUND", f"no tensor {ref.name!r} in group {ref.group!r}", member="data.json", pointer=ref.pointer + "/ref")
        if info.dtype != ref.dtype or list(info.shape) != ref.shape:
            raise RlarchiveError("REF_MISMATCH", f"tensor {ref.group}/{ref.name} is {info.dtype}{list(info.shape)}, the reference says {ref.dtype}{ref.shape}", member="data.json", pointer=ref.pointer)

    def verify(self, skip: Iterable[str] = ()) -> None:
        """The deferred checks (spec §11.1 step 10): CRC-32 then digest of every other member.

        ``skip`` names members left unchecked here, for a caller that defers
        their checks until their bytes are used (spec §1.2): ``rlarchive.sb3.load``
        maps a replay buffer's arrays for training without reading them.
        """
        skipped = set(skip)
        for m in self._deferred_members():
            if m.name not in skipped:
                self._verify_member(m)

    def _deferred_members(self) -> list[Member]:
        """The members step 10 checks, in ZIP order."""
        return [m for m in self._members.values() if m.name not in ("manifest.json", "data.json")]

    def _verify_member(self, m: Member) -> None:
        crc, sha = digests(self._chunks(m))
        if crc != m.crc32:
            raise RlarchiveError("ZIP_CRC_MISMATCH", "CRC-32 does not match the member's data", member=m.name, offset=m.data_offset)
        entry = self.manifest.members.get(m.name)
        if entry is not None and sha != entry["sha256"]:
            raise RlarchiveError("MEMBER_DIGEST_MISMATCH", f"{m.name} does not match its SHA-256", member=m.name)

    # -- access

    @property
    def format_version(self) -> str:
        """The archive's format version, e.g. ``"1.0"``."""
        return self.manifest.format_version

    @property
    def producer(self) -> dict:
        """``{"name": ..., "version": ...}`` of the software that wrote the archive."""
        return dict(self.manifest.producer)

    @property
    def metadata(self) -> dict:
        """The manifest's free-text metadata (string to string)."""
        return self.manifest.metadata

    @property
    def provenance(self) -> metadata_keys.Provenance:
        """What the metadata says about the training run (spec/metadata.md §1): environment id,
        environments in parallel, timesteps, seed, library versions, wrappers; each None when
        absent or malformed (then :attr:`warnings` holds its ``METADATA_INVALID``)."""
        return metadata_keys.provenance(self.metadata)

    @property
    def evaluations(self) -> list[dict]:
        """The recorded evaluations (spec/metadata.md §3), oldest first; [] when none or malformed."""
        return metadata_keys.evaluations(self.metadata)

    @property
    def groups(self) -> list[str]:
        """Names of the tensor groups, in member order."""
        return list(self._groups)

    @property
    def raw_data(self) -> dict:
        """The checked data document as parsed JSON (``{"data": ..., "optimizers": ...}``)."""
        return self._doc

    @property
    def data(self) -> dict:
        """The algorithm's parameters as Python values (decoded once, on first access)."""
        if self._data is None:
            decoder = self._decoder(self._numpy_ref)
            self._data = {k: decoder.decode(v) for k, v in self._doc["data"].items()}
        return self._data

    @property
    def optimizer_names(self) -> list[str]:
        """Names of the optimizer states in the archive."""
        return list(self._doc["optimizers"])

    def optimizer(self, name: str, framework: str = "numpy") -> dict:
        """An optimizer's state dict; ``framework="torch"`` gives torch tensors, ready for ``load_state_dict``."""
        if name not in self._doc["optimizers"]:
            raise RlarchiveError("TENSOR_NOT_FOUND", f"no optimizer {name!r}")
        resolve = self._numpy_ref if framework == "numpy" else (lambda g, n: self.tensor(g, n, framework))
        return self._decoder(resolve).decode(self._doc["optimizers"][name])

    def tensor_info(self, group: str) -> dict[str, TensorInfo]:
        """dtype, shape, offset and size of each tensor of a group, in header order."""
        if group not in self._groups:
            raise RlarchiveError("TENSOR_NOT_FOUND", f"no tensor group {group!r}")
        return dict(self._groups[group])

    def tensor(self, group: str, name: str, framework: str = "numpy", device: Any = None) -> Any:
        """One tensor, as a zero-copy view (NumPy array, RawTensor, or torch tensor).

        ``framework``: ``"numpy"``/``"np"`` or ``"torch"``/``"pt"``; ``device`` (torch only) moves it there."""
        framework = framework_of(framework, device)
        info = self.tensor_info(group).get(name)
        if info is None:
            raise RlarchiveError("TENSOR_NOT_FOUND", f"no tensor {name!r} in group {group!r}")
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
        info = self.tensor_info(group)[name]
        return hashlib.sha256(self._range(info.offset, info.nbytes)).hexdigest()

    @property
    def extensions_used(self) -> list[str]:
        """The extensions the archive uses (``extensions_used`` of the manifest)."""
        return self.manifest.extensions_used

    def vec_normalize(self) -> Optional["Statistics"]:
        """The observation and return normalisation statistics (extension ``RLA_vec_normalize``), or None.

        The extension member is checked first (spec RLA_vec_normalize §5):
        RlarchiveError with its code for a malformed member.
        """
        from . import extensions, vec_normalize

        raw = extensions.read_document(self, vec_normalize.EXTENSION)
        if raw is None:
            return None
        return vec_normalize.from_value(Decoder(self._numpy_ref, "neutral").decode(raw))

    def replay_buffer(self) -> Optional["ReplayBufferData"]:
        """The replay buffer (extension ``RLA_replay_buffer``), or None when the archive has none.

        The member is checked first (spec RLA_replay_buffer §6), reading no
        bytes of the buffer's observations, actions, rewards, dones or
        timeouts; its referenced arrays are then zero-copy views on the
        mapped archive (from a remote source, each is fetched once here).
        """
        from . import extensions, replay_buffer

        raw = extensions.read_document(self, replay_buffer.EXTENSION)
        if raw is None:
            return None
        return replay_buffer.from_value(self._decoder(self._numpy_ref).decode(raw))

    def policy(self) -> Optional["Policy"]:
        """The portable policy (extension ``RLA_policy``), ready to ``predict``, or None when the archive has none.

        Only NumPy is needed. The description is checked first (spec
        RLA_policy §8); its weights are copied out of the file, so the policy
        stays usable after the archive is closed.
        """
        from . import extensions, policy_description
        from .policy import Policy

        raw = extensions.read_document(self, policy_description.EXTENSION)
        if raw is None:
            return None
        copies: dict = {}  # one copy per tensor, however many nodes reference it

        def resolve(group: str, name: str) -> Any:
            if (group, name) not in copies:
                copies[group, name] = self.tensor(group, name).copy()
            return copies[group, name]

        desc = Decoder(resolve, "neutral").decode(raw)
        return Policy(desc, vec_normalize=self.vec_normalize() if desc.get("vec_normalize") else None)

    def check_extensions(self) -> None:
        """Spec §11.1 step 11: check the member of every used extension this package supports."""
        from . import extensions

        extensions.check_used(self)

    def dump(self) -> bytes:
        """The canonical dump (spec §13); performs every deferred check first."""
        from .dump import dump

        return dump(self)

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
            yield from member_chunks(self._buffer(), m, chunk)
            return
        for pos in range(m.data_offset, m.data_offset + m.size, chunk):
            yield self._src.read(pos, min(chunk, m.data_offset + m.size - pos))

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

    def __enter__(self) -> "Archive":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<rlarchive.Archive {self.path!r} v{self.format_version} groups={self.groups}>"

    def get_slice(self, group: str, name: str, framework: str = "numpy", device: Any = None) -> TensorSlice:
        """One tensor for partial reads, as safetensors' ``get_slice``: ``.shape``, ``.dtype``, and
        ``[...]`` by integers, slices and ``...``, reading only the bytes the selection needs (by range
        from a remote source). ``framework`` and ``device`` as for :meth:`tensor`."""
        info = self.tensor_info(group).get(name)
        if info is None:
            raise RlarchiveError("TENSOR_NOT_FOUND", f"no tensor {name!r} in group {group!r}")
        return TensorSlice(info, self._range if self._local else self._src.read, framework, device)


def open_archive(
    source: SourceInput,
    *,
    spaces: str = "auto",
    storage_options: Optional[Mapping[str, Any]] = None,
    timeout: Optional[float] = None,
    min_rate: Optional[float] = None,
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
