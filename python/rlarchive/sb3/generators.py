"""The random generators a training run draws from: taken from a model, checked, then installed all at once.

The process-wide generators (NumPy's global one, Python's ``random``,
PyTorch's CPU generator and CUDA's) and a model's spaces' generators, as the
extension ``RLA_training`` holds them (``spec/extensions/RLA_training.md``
§3.6, §3.7, §4). Restoring is two steps: :func:`prepare` checks every state
against the extension's rules and against what its generator accepts (each
set into a private generator of its kind) and builds every object, touching
neither the model nor the process; :func:`install` then sets them all, and
on a failure puts back every process-wide generator it had set, so that a
load that fails leaves the process's generators as they were.
:class:`Snapshot` keeps and puts back the process-wide generators (the
loader holds one for the whole load: building a model seeds them).
"""

from __future__ import annotations

import functools
import random
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import RlarchiveError
from ..extensions import training as training_state
from ..extensions.training import BIT_GENERATORS

__all__ = ["Snapshot", "Plan", "space_state", "prepare", "install"]


def _refused(what: str, e: BaseException) -> RlarchiveError:
    return RlarchiveError(
        "VALUE_UNSUPPORTED", f"the generator refuses the archive's {what}: {type(e).__name__}: {str(e)[:300]}"
    )


@dataclass
class Snapshot:
    """The states of the process-wide generators at one moment (CUDA's when CUDA is initialised), to put back."""

    numpy: Any
    python: Any
    torch: Any
    cuda: list[Any] | None

    @classmethod
    def take(cls) -> Snapshot:
        import torch

        cuda = None
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            cuda = list(torch.cuda.get_rng_state_all())
        return cls(np.random.get_state(), random.getstate(), torch.get_rng_state(), cuda)

    def put_back(self) -> None:
        """Set every generator to the state taken (each one, even when another fails)."""
        import torch

        setters: list[Callable[[], Any]] = [
            lambda: np.random.set_state(self.numpy),
            lambda: random.setstate(self.python),
            lambda: torch.set_rng_state(self.torch),
        ]
        cuda = self.cuda
        if cuda is not None:
            setters.append(lambda: torch.cuda.set_rng_state_all(cuda))
        failed: Exception | None = None
        for put in setters:
            try:
                put()
            except Exception as e:  # the others are put back all the same
                failed = failed or e
        if failed is not None:
            raise failed


# ---------------------------------------------------------------- the spaces' generators


def subspaces(space: Any) -> list[Any]:
    """A gymnasium space's subspaces: a Dict's in key order, a Tuple's in order, none for others."""
    from gymnasium import spaces

    if isinstance(space, spaces.Dict):
        return list(space.spaces.values())
    if isinstance(space, spaces.Tuple):
        return list(space.spaces)
    return []


def space_state(space: Any) -> dict[str, Any] | None:
    """The generators of a gymnasium space and of its subspaces (SPACE_RANDOM), or None for no space.

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED for a bit generator the extension does not hold.
    """
    if space is None:
        return None
    gen = getattr(space, "_np_random", None)  # the property would make one from fresh entropy
    g = None
    if gen is not None:
        st = gen.bit_generator.state
        if st["bit_generator"] not in BIT_GENERATORS:
            raise RlarchiveError(
                "VALUE_UNSUPPORTED",
                f"a space's bit generator {st['bit_generator']} (RLA_training holds {', '.join(BIT_GENERATORS)})",
            )
        g = {
            "bit_generator": st["bit_generator"], "state": int(st["state"]["state"]), "inc": int(st["state"]["inc"]),
            "has_uint32": int(st["has_uint32"]), "uinteger": int(st["uinteger"]),
        }  # fmt: skip
    return {"generator": g, "spaces": [space_state(s) for s in subspaces(space)]}


def _space_generators(
    space: Any, v: Mapping[str, Any], where: str, out: list[tuple[Any, np.random.Generator | None]]
) -> None:
    """Append (space, its new generator or None) for ``space`` and its subspaces, each generator made now."""
    subs = subspaces(space)
    if len(subs) != len(v["spaces"]):
        raise RlarchiveError(
            "VALUE_UNSUPPORTED",
            f"the {where}'s generators are for {len(v['spaces'])} subspaces, the model's space has {len(subs)}",
        )
    g = v["generator"]
    gen = None
    if g is not None:
        try:
            bitgen = {"PCG64": np.random.PCG64, "PCG64DXSM": np.random.PCG64DXSM}[g["bit_generator"]]()
            bitgen.state = {
                "bit_generator": g["bit_generator"], "state": {"state": int(g["state"]), "inc": int(g["inc"])},
                "has_uint32": int(g["has_uint32"]), "uinteger": int(g["uinteger"]),
            }  # fmt: skip
        except (KeyError, TypeError, ValueError, OverflowError) as e:
            raise _refused(f"{where} generator state", e) from None
        gen = np.random.Generator(bitgen)
    out.append((space, gen))
    for s, sv in zip(subs, v["spaces"]):
        _space_generators(s, sv, where, out)


# ---------------------------------------------------------------- check all, then set all


@dataclass
class Plan:
    """What :func:`install` sets: every object made and checked by :func:`prepare`."""

    env_spaces: dict[str, Any] = field(default_factory=dict)  # model attribute -> the environment's space object
    space_generators: list[tuple[Any, np.random.Generator | None]] = field(
        default_factory=list
    )  # (space, generator or None)
    numpy: Any = None
    python: Any = None
    torch: Any = None
    cuda: list[Any] | None = None
    restored: list[str] = field(default_factory=list)
    not_restored: dict[str, str] = field(default_factory=dict)
    cuda_warning: str | None = None


def _private_check(what: str, put: Callable[[], Any]) -> None:
    try:
        put()
    except (TypeError, ValueError, RuntimeError, OverflowError) as e:
        raise _refused(what, e) from None


def _prepare_spaces(model: Any, r: Mapping[str, Any], keep_last_obs: bool, plan: Plan) -> None:
    for key in ("action_space", "observation_space"):
        env_space = getattr(getattr(model, "env", None), key, None) if keep_last_obs else None
        space = getattr(model, key, None)
        if env_space is not None and r[key] is not None and space_state(env_space) == r[key]:
            plan.env_spaces[key] = env_space  # one object, as in a model built on this environment (the spec's §4)
            space = env_space
        elif r[key] is not None and space is not None:
            _space_generators(space, r[key], key.replace("_", " "), plan.space_generators)
        if r[key] is not None:
            if space is not None:
                plan.restored.append(f"random_state.{key}")
            else:
                plan.not_restored[f"random_state.{key}"] = f"the model has no {key}"


def _set_private_cuda(device: int, state: Any) -> None:
    import torch

    torch.Generator(device=f"cuda:{device}").set_state(state)


def _prepare_cuda(cuda: list[Any], plan: Plan) -> None:
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count != len(cuda):
        plan.not_restored["random_state.torch_cuda"] = (
            f"the archive records {len(cuda)} CUDA device(s), this machine has {count}"
        )
        plan.cuda_warning = (
            f"the archive records the generators of {len(cuda)} CUDA device(s) and this machine has {count}: they "
            "are left as they are, so draws made on CUDA will differ from the recorded run's"
        )
        return
    plan.cuda = [torch.as_tensor(np.array(a, np.uint8)) for a in cuda]
    for i, t in enumerate(plan.cuda):
        _private_check(f"CUDA generator state {i}", functools.partial(_set_private_cuda, i, t))
    plan.restored.append("random_state.torch_cuda")


def prepare(model: Any, r: Mapping[str, Any], keep_last_obs: bool) -> Plan:
    """Check RANDOM (decoded) and make every generator state and object :func:`install` sets; nothing is set yet.

    Raises:
        RlarchiveError: EXTENSION_INVALID for a state that breaks the extension's
            rules (§3.7), VALUE_UNSUPPORTED for one its generator refuses or that
            does not fit the model's spaces.
    """
    import torch

    training_state.check_generators(r)
    plan = Plan()
    _prepare_spaces(model, r, keep_last_obs, plan)
    n, p = r["numpy"], r["python"]
    try:
        plan.numpy = (
            "MT19937",
            np.array(n["key"], np.uint32),
            int(n["pos"]),
            int(n["has_gauss"]),
            float(n["cached_gaussian"]),
        )
        gauss = None if p["gauss_next"] is None else float(p["gauss_next"])
        plan.python = (int(p["version"]), tuple(int(x) for x in np.array(p["state"]).tolist()), gauss)
        plan.torch = torch.as_tensor(np.array(r["torch"], np.uint8))
    except (TypeError, ValueError, OverflowError) as e:
        raise _refused("generator states", e) from None
    _private_check("NumPy generator state", lambda: np.random.RandomState().set_state(plan.numpy))
    _private_check("Python generator state", lambda: random.Random().setstate(plan.python))
    _private_check("PyTorch generator state", lambda: torch.Generator().set_state(plan.torch))
    plan.restored.extend(["random_state.numpy", "random_state.python", "random_state.torch"])
    if r["torch_cuda"]:
        _prepare_cuda(r["torch_cuda"], plan)
    return plan


def install(model: Any, plan: Plan) -> None:
    """Set what :func:`prepare` made: the spaces' generators, then NumPy's, Python's, PyTorch's and CUDA's.

    Raises:
        RlarchiveError: VALUE_UNSUPPORTED when a generator refuses its state;
            every process-wide generator is then as it was before the call.
    """
    import torch

    from .keys import LoadWarning

    for key, space in plan.env_spaces.items():
        setattr(model, key, space)
    for space, gen in plan.space_generators:
        space._np_random = gen
    before = Snapshot.take()
    steps: list[tuple[str, Callable[[], Any]]] = [
        ("NumPy generator state", lambda: np.random.set_state(plan.numpy)),
        ("Python generator state", lambda: random.setstate(plan.python)),
        ("PyTorch generator state", lambda: torch.set_rng_state(plan.torch)),
    ]
    cuda = plan.cuda
    if cuda is not None:
        steps.append(("CUDA generator states", lambda: torch.cuda.set_rng_state_all(cuda)))
    for what, put in steps:
        try:
            put()
        except Exception as e:  # whatever a generator raises: the process gets its generators back
            before.put_back()
            raise _refused(what, e) from None
    if plan.cuda_warning is not None:
        warnings.warn(plan.cuda_warning, LoadWarning, stacklevel=4)
