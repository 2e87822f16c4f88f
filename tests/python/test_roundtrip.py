"""Writer and reader: round trips of every value type, determinism, atomicity, laziness."""

import math
import os

import numpy as np
import pytest
from cases import _all_dtypes, _every_space

import rlarchive
from rlarchive.errors import RlarchiveError


def _roundtrip(tmp_path, data, **kw):
    p = tmp_path / "a.rlarchive"
    rlarchive.save(p, data, **kw)
    ar = rlarchive.open(p, spaces="neutral")
    return ar, ar.data


def _same(a, b):
    """Equality that also checks types and float bits (nan, -0.0)."""
    if isinstance(a, float):
        return isinstance(b, float) and (
            math.isnan(a) and math.isnan(b) or (a == b and math.copysign(1, a) == math.copysign(1, b))
        )
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, np.generic):
        return type(a) is type(b) and a.tobytes() == b.tobytes()
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return type(b) is dict and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


VALUES = {
    "none": None,
    "bools": [True, False],
    "ints": [0, -1, 2**53 - 1, -(2**53 - 1), 2**53, -(2**53), 2**63 - 1, -(2**63), 2**64 - 1, 10**100],
    "floats": [0.0, -0.0, 1.0, 0.1, 5e-324, 1.7976931348623157e308, math.inf, -math.inf, math.nan, 1e21, 1e-7],
    "strings": ["", "é", "\U0001f600", "\x00\x1f\u2028", "$type"],
    "bytes": [b"", bytes(range(256))],
    "tuples": ((), (1,), (1, (2.5, "x"), [None])),
    "dicts": {
        "plain": {"a": 1},
        "int_keys": {1: "a", -5: "b"},
        "mixed": {None: 0, False: 1, 2.5: 2, b"k": 3, (1, ("x",)): 4},
        "dollar": {"$type": 1},
    },
    "arrays": [
        np.arange(6, dtype=np.int16).reshape(2, 3),
        np.array(2.5),
        np.zeros((0, 3), np.float32),
        np.linspace(0, 1, 500),
    ],
    "scalars": [np.float32(1.5), np.int64(-3), np.uint8(7), np.bool_(False), np.float16(0.25)],
    "empty": {"list": [], "dict": {}},
}


def test_every_value_type_round_trips(tmp_path):
    ar, data = _roundtrip(tmp_path, VALUES)
    for k, v in VALUES.items():
        assert _same(v, data[k]), k
    ar.close()


def test_every_space_round_trips_neutral_and_gymnasium(tmp_path):
    spaces = _every_space()
    ar, data = _roundtrip(tmp_path, spaces)
    assert data == spaces
    ar.close()
    gym = pytest.importorskip("gymnasium")
    with rlarchive.open(tmp_path / "a.rlarchive", spaces="gymnasium") as ar:
        g = ar.data
        assert isinstance(g["box_inf"], gym.spaces.Box) and np.isneginf(g["box_inf"].low).all()
        assert list(g["dict_nested"].spaces) == ["z_first", "image", "inner"]  # order kept
        # gymnasium spaces written back give the same archive
        rlarchive.save(tmp_path / "b.rlarchive", g)
    with rlarchive.open(tmp_path / "b.rlarchive", spaces="neutral") as ar:
        assert ar.data == spaces


def test_schedules_round_trip_and_follow_sb3(tmp_path):
    s = {
        "c": rlarchive.Constant(0.5),
        "l": rlarchive.Linear(1.0, 0.1, 0.5),
        "p": rlarchive.Piecewise(((0.0, 4.0), (0.5, 2.0), (1.0, 0.0))),
        "st": rlarchive.Piecewise(((0.0, 3.0), (0.5, 1.0)), "step"),
    }
    ar, d = _roundtrip(tmp_path, s)
    assert d == s
    ar.close()
    for p in (1.0, 0.9, 0.75, 0.5, 0.2, 0.0):
        e = 1 - p
        sb3_linear = 0.1 if e > 0.5 else 1.0 + e * (0.1 - 1.0) / 0.5  # SB3 LinearSchedule
        assert d["l"](p) == sb3_linear
    assert d["p"](0.75) == 3.0 and d["p"](0.0) == 0.0 and d["p"](1.0) == 4.0
    assert d["st"](0.7) == 3.0 and d["st"](0.4) == 1.0


def test_every_dtype_round_trips_bit_for_bit(tmp_path):
    tensors = _all_dtypes()
    p = tmp_path / "t.rlarchive"
    rlarchive.save(p, {}, {"all": tensors})
    with rlarchive.open(p) as ar:
        got = ar.tensors("all")
        for name, t in tensors.items():
            raw = t.raw if isinstance(t, rlarchive.RawTensor) else t
            g = got[name].raw if isinstance(got[name], rlarchive.RawTensor) else got[name]
            assert np.asarray(g).tobytes() == np.asarray(raw).tobytes(), name
            info = ar.tensor_info("all")[name]
            assert info.offset % rlarchive.dtypes.DTYPES[info.dtype].alignment == 0


def test_strided_and_big_endian_inputs(tmp_path):
    a = np.arange(24, dtype=np.float64).reshape(4, 6)[:, ::2]  # not contiguous
    b = np.arange(5, dtype=">i4")
    p = tmp_path / "s.rlarchive"
    rlarchive.save(p, {"b": b}, {"g": {"a": a, "b": b}})
    with rlarchive.open(p) as ar:
        assert np.array_equal(ar.tensor("g", "a"), a)
        assert np.array_equal(ar.tensor("g", "b"), b) and ar.tensor("g", "b").dtype == np.dtype("<i4")
        assert np.array_equal(ar.data["b"], b)


def test_torch_tensors_and_optimizer_round_trip_losslessly(tmp_path):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3, betas=(0.8, 0.9))
    for _ in range(3):
        opt.zero_grad()
        net(torch.randn(5, 3)).pow(2).sum().backward()
        opt.step()
    sd = opt.state_dict()
    p = tmp_path / "o.rlarchive"
    rlarchive.save(p, {"x": torch.arange(3, dtype=torch.bfloat16)}, {"policy": net.state_dict()}, {"opt": sd})
    with rlarchive.open(p) as ar:
        back = ar.optimizer("opt", framework="torch")
        assert back["param_groups"] == sd["param_groups"]
        for pid, st in sd["state"].items():
            for k, v in st.items():
                assert back["state"][pid][k].dtype == v.dtype and torch.equal(back["state"][pid][k], v)
        opt2 = torch.optim.Adam(net.parameters(), lr=1.0)
        opt2.load_state_dict(back)
        params = ar.tensors("policy", framework="torch")
        for k, v in net.state_dict().items():
            assert torch.equal(params[k], v)
        x = ar.data["x"]
        assert isinstance(x, rlarchive.RawTensor) and torch.equal(x.to_torch(), torch.arange(3, dtype=torch.bfloat16))


def test_class_references_are_never_imported_unless_allowed(tmp_path):
    ar, d = _roundtrip(tmp_path, {"cls": rlarchive.ClassRef("os", "system"), "t": np.ndarray})
    with pytest.raises(RlarchiveError) as e:
        d["cls"].resolve(allow=["numpy.*"])
    assert e.value.code == "IMPORT_NOT_ALLOWED"
    assert d["t"].resolve(allow=["numpy.*"]) is np.ndarray
    ar.close()


class _Custom:
    def __init__(self, v):
        self.v = v


def test_opaque_values_need_the_fallback_and_are_never_unpickled_by_default(tmp_path):
    with pytest.raises(RlarchiveError) as e:
        rlarchive.save(tmp_path / "x.rlarchive", {"f": _Custom(3)})
    assert e.value.code == "VALUE_UNSUPPORTED"
    assert not (tmp_path / "x.rlarchive").exists()
    ar, d = _roundtrip(tmp_path, {"f": _Custom(3), "g": lambda x: x}, opaque_fallback=True)
    assert isinstance(d["f"], rlarchive.Opaque) and d["f"].type.endswith("_Custom")
    with pytest.raises(RlarchiveError) as e:
        d["f"].unpickle()
    assert e.value.code == "PICKLE_NOT_ALLOWED"
    assert d["f"].unpickle(trusted=True).v == 3
    ar.close()


def test_same_input_same_bytes(tmp_path):
    data = {"v": VALUES, "s": _every_space()}
    tensors = {"policy": {"w": np.ones((3, 3), np.float32)}, "all": _all_dtypes()}
    rlarchive.save(tmp_path / "a", data, tensors)
    rlarchive.save(tmp_path / "b", data, tensors)
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


def test_resaving_what_open_returned_gives_the_same_bytes(tmp_path):
    data = {"v": VALUES, "s": _every_space()}
    tensors = {"policy": {"w": np.ones((3, 3), np.float32)}}
    rlarchive.save(tmp_path / "a", data, tensors)
    with rlarchive.open(tmp_path / "a", spaces="neutral") as ar:
        rlarchive.save(
            tmp_path / "b",
            ar.data,
            {g: ar.tensors(g) for g in ar.groups if g != "arrays"},
            producer=(ar.producer["name"], ar.producer["version"]),
        )
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


def test_failing_save_leaves_the_existing_file_untouched(tmp_path):
    p = tmp_path / "agent.rlarchive"
    rlarchive.save(p, {"gamma": 0.9})
    before = p.read_bytes()

    def boom():
        yield np.ones(3, np.float32)
        raise RuntimeError("disk full")

    class Exploding(dict):
        def items(self):
            yield "a", np.ones(3)
            raise RuntimeError("interrupted while converting")

    with pytest.raises(RuntimeError):
        rlarchive.save(p, {"gamma": 0.99}, {"policy": Exploding()})
    with pytest.raises(RlarchiveError):
        rlarchive.save(p, {"bad": object()})
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["agent.rlarchive"]  # no temporary file left


def test_failure_during_writing_leaves_no_partial_file(tmp_path, monkeypatch):
    p = tmp_path / "agent.rlarchive"
    rlarchive.save(p, {"gamma": 0.9})
    before = p.read_bytes()
    from rlarchive import zipwrite

    def fail_finish(self):
        raise OSError("no space left on device")

    monkeypatch.setattr(zipwrite.ZipWriter, "finish", fail_finish)
    with pytest.raises(RlarchiveError) as e:
        rlarchive.save(p, {"gamma": 0.99}, {"policy": {"w": np.ones(1000)}})
    assert e.value.code == "IO_ERROR"
    assert p.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["agent.rlarchive"]


def test_open_reads_no_tensor_bytes(tmp_path):
    big = {"w": np.ones((1024, 1024), np.float32), "b": np.zeros(4096, np.float64)}
    p = tmp_path / "big.rlarchive"
    rlarchive.save(p, {"gamma": 0.99, "obs_low": np.zeros(2000)}, {"policy": big})
    from rlarchive.sources import PathSource

    src = PathSource(p)
    src.log = []
    ar = rlarchive.open(src)
    regions = []
    for g in ar.groups:
        for info in ar.tensor_info(g).values():
            regions.append((info.offset, info.offset + info.nbytes))
    for off, n in src.log:
        for a, b in regions:
            assert off + n <= a or off >= b, f"open read bytes {off}..{off + n} of a tensor at {a}..{b}"
    assert ar.bytes_read < 200_000  # directory, manifest, data.json, headers
    w = ar.tensor("policy", "w")  # a view: still no read
    assert w.shape == (1024, 1024) and not w.flags.writeable
    assert all(not (a < off + n and off < b) for off, n in src.log for a, b in regions)
    ar.close()


def test_tensor_views_share_the_file_mapping(tmp_path):
    p = tmp_path / "v.rlarchive"
    rlarchive.save(p, {}, {"policy": {"w": np.arange(10, dtype=np.float32)}})
    with rlarchive.open(p) as ar:
        w = ar.tensor("policy", "w")
        assert w.base is not None and np.shares_memory(w, np.frombuffer(ar._buffer(), np.uint8))


def test_writer_refuses_invalid_names(tmp_path):
    for bad in (
        {"a/b": {"w": np.ones(1)}},
        {"Policy": {}, "policy": {}},
        {"ok": {"__x": np.ones(1)}},
        {"ok": {"": np.ones(1)}},
    ):
        with pytest.raises(RlarchiveError) as e:
            rlarchive.save(tmp_path / "x", {}, bad)
        assert e.value.code == "WRITE_INVALID"
    with pytest.raises(RlarchiveError) as e:
        rlarchive.save(tmp_path / "x", {1: "not a string key"})
    assert e.value.code == "WRITE_INVALID"
    with pytest.raises(RlarchiveError) as e:
        rlarchive.save(tmp_path / "x", {"s": rlarchive.Linear(1.0, 0.0, 2.0)})
    assert e.value.code == "WRITE_INVALID"


def test_missing_file_is_an_io_error(tmp_path):
    with pytest.raises(RlarchiveError) as e:
        rlarchive.open(tmp_path / "nope.rlarchive")
    assert e.value.code == "IO_ERROR"
    assert rlarchive.validate(tmp_path / "nope.rlarchive")["issues"][0]["code"] == "IO_ERROR"


def test_unknown_tensor_or_group_is_reported(tmp_path):
    p = tmp_path / "a"
    rlarchive.save(p, {}, {"policy": {"w": np.ones(1)}})
    with rlarchive.open(p) as ar:
        for call in (lambda: ar.tensors("nope"), lambda: ar.tensor("policy", "nope"), lambda: ar.optimizer("nope")):
            with pytest.raises(RlarchiveError) as e:
                call()
            assert e.value.code == "TENSOR_NOT_FOUND"


def test_digests_stay_in_order_with_mixed_chunk_sizes(tmp_path):
    """Large and small tensors interleaved: the threaded SHA-256 must see the chunks in order."""
    t = {}
    for i in range(30):
        t[f"big{i:02d}"] = np.full(400_000, i, np.float32)
        t[f"small{i:02d}"] = np.full(10, i, np.float32)
    for k in range(4):
        p = tmp_path / f"m{k}.rlarchive"
        rlarchive.save(p, {}, {"g": t})
        report = rlarchive.validate(p)
        assert report["valid"], report["issues"]
