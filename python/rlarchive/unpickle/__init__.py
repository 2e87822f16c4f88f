"""A restricted unpickler for the pickles found in Stable-Baselines archives.

Stable-Baselines3 (and Stable-Baselines 2) store every value of a model's
``data`` member that JSON cannot carry as a base64 cloudpickle stream: the
observation and action spaces, schedules, NumPy arrays, class references and
so on. Loading those streams with :mod:`pickle` runs whatever code they name.

This module reads them without running any of it, in two steps:

1. :class:`RestrictedUnpickler` reads the opcodes into a graph of *stand-ins*.
   Its :meth:`~RestrictedUnpickler.find_class` never imports anything: a
   global is either on the allow-list (:data:`CONSTRUCTORS`, Annex B.5),
   which gives a local stand-in class or an immutable callable
   (:class:`GlobalName` for names that may only be referred to), or, when
   module and name are plain identifier paths, a mere name
   (:class:`GlobalName`). Calling or instantiating such a name makes nothing:
   it records the call as an :class:`Unknown`. A malformed name aborts the load.
2. :func:`to_neutral` turns the stand-in graph into neutral rlarchive values.
   An :class:`Unknown` inside a value becomes the smallest opaque leaf: a
   pickle of exactly that recorded call, written again by
   :mod:`rlarchive.unpickle.pickler` (Annex B.4); a whole value that is one
   keeps its original bytes.

A recorded name is never resolved here. A caller that wants the object later
goes through :meth:`rlarchive.values.ClassRef.resolve`, which imports only an
exact (module, class) pair the caller allows and looks each part of the
qualname up in the ``__dict__`` of the class before it: no attribute of a
module is traversed, so ``stable_baselines3.common.utils`` / ``os.system``
never reaches ``os``.

Safety properties, each tested:

- Nothing a stream does outlives the load or reaches another load: stand-in
  classes have a metaclass that refuses to set or delete attributes,
  :class:`GlobalName` and every other stand-in instance refuse them too, the
  allow-list is a read-only mapping, and the callables it holds are immutable
  objects bound to one unpickler (the functions behind them are never handed
  to the stream). ``BUILD`` reaches only the stand-ins designed for it
  (spaces, schedules, dtypes, arrays, random generators, and once the record
  of an :class:`Unknown` call); on any other object it aborts the load.
  ``REDUCE``, ``NEWOBJ``, ``INST`` and ``OBJ`` call only allow-listed
  stand-ins, or record the call of a mere name; ``APPEND(S)``, ``SETITEM(S)`` and ``ADDITEMS``
  reach only lists, deques, dicts and sets, whose keys must hash cheaply (no
  deep or widely shared tuple); extension codes, persistent ids and
  out-of-band buffers are refused.
- Memory is bounded by the caller's :class:`~rlarchive.unpickle.budget.ImportBudget`:
  the unpickler is built on the pure-Python :class:`pickle._Unpickler`
  (memo indices are dictionary keys, declared sizes never allocate more than
  the stream holds), every opcode is charged a fixed cost, every array,
  copy and broadcast is charged before it is made, and the conversion charges
  every reference to a value in its output (an array referenced a thousand
  times is written a thousand times) plus a fixed cost per part. An exhausted
  budget raises ``RlarchiveError("LIMIT_EXCEEDED")``, which fails the whole
  import; every other problem raises :class:`NotNeutral`, and the caller
  keeps the original bytes as an opaque value.
- The same stand-in converts once (conversions are memoised by identity):
  a big-endian array is byte-swapped once however often it is referenced.
- The values produced are ones the writer takes: integers of at most
  ``MAX_INT_DIGITS`` decimal digits (checked on the bit length, never by
  converting), spaces that follow spec §8, nesting within ``MAX_JSON_DEPTH``
  once written as a data member.

The unpickler lives in modules named after what they do, re-exported here:
:mod:`~rlarchive.unpickle.standins` (what a pickle may build),
:mod:`~rlarchive.unpickle.numpy_values` (NumPy values),
:mod:`~rlarchive.unpickle.functions` (functions pickled by value),
:mod:`~rlarchive.unpickle.allowlist` (the allow-list),
:mod:`~rlarchive.unpickle.machine` (the opcode loop and its budget),
:mod:`~rlarchive.unpickle.neutral` (the conversions) and
:mod:`~rlarchive.unpickle.recorded` (what a recorded call converts to).

The stand-ins :class:`Array`, :class:`Scalar` and :class:`Function` are
public too, for a caller that looks into a stand-in graph before converting
it (the Stable-Baselines 2 importer).

In particular these modules never import gymnasium, gym, stable_baselines3,
cloudpickle, torch or any module a pickle names; they need only NumPy (to hold
array data, which it builds from raw bytes with :func:`numpy.frombuffer`).
"""

from __future__ import annotations

from .allowlist import CONSTRUCTORS
from .functions import Function
from .machine import RestrictedUnpickler, describe_globals, pickled_type_name, restricted_loads
from .neutral import decode, to_neutral
from .numpy_values import Array, Scalar
from .standins import GlobalName, NotNeutral, Unknown

__all__ = [
    "NotNeutral",
    "RestrictedUnpickler",
    "GlobalName",
    "restricted_loads",
    "to_neutral",
    "decode",
    "CONSTRUCTORS",
    "Unknown",
    "describe_globals",
    "pickled_type_name",
    "Array",
    "Scalar",
    "Function",
]
