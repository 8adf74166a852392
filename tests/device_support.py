"""Checks that a trainer computes on the settings' device, without a GPU.

Two stand-ins for :func:`companion.core.train.on_device`:

* :func:`on_meta` moves the model to the meta device, whose tensors have shapes and no data; every torch call is
  checked not to mix devices (:class:`OneDevicePerCall`: some meta kernels accept a CPU argument that CUDA
  refuses).  The engine turns records into NumPy arrays, which meta tensors cannot give, so :func:`steps_only`
  stands in for :func:`companion.core.train.run`: a few updates, then one record, kept for the test to inspect.
* :func:`on_fake_meta` runs the whole training under PyTorch's fake tensors, which check devices strictly and let
  a record copy its values to the CPU (there are none to copy), but cannot read a number (``int(t)``, ``.item()``):
  for trainers whose steps read none (the record's conversion to NumPy is then stubbed by the test).

:class:`MetaReadsAsZeros` stands in for the numbers a trainer reads on the device (a record's loss, a power iteration's
convergence test, a rank): ``float(t)``, ``.item()`` give 0, ``int(t)`` 1, ``bool(t)`` False, ``.cpu()``,
``.numpy()`` zeros of the right shape, so records run on the meta device too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_leaves

from companion.core.train import History

META = torch.device("meta")


class OneDevicePerCall(TorchFunctionMode):
    """Fails any torch call whose tensor arguments lie on more than one device."""

    # torch's own query when a module is moved (nn.utils.skip_init builds a layer on meta, then on the CPU): not a
    # computation
    QUERIES = ("_has_compatible_shallow_copy_type",)

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        devices = {t.device.type for t in tree_leaves((args, kwargs or {})) if isinstance(t, torch.Tensor)}
        name = getattr(func, "__name__", func)
        assert len(devices) <= 1 or name in self.QUERIES, f"{name} mixes tensors on {sorted(devices)}"
        return func(*args, **(kwargs or {}))


class MetaReadsAsZeros(TorchFunctionMode):
    """A number read from a meta tensor (``float``, ``.item()``) is 0, a count (``int``) 1 and a truth value False, as
    reading it from a GPU would give some value; a meta tensor copied out (``.cpu()``, ``.to("cpu")``, ``.numpy()``)
    gives zeros of its shape and dtype.  Tensors on other devices read as usual."""

    def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
        kwargs = kwargs or {}
        tensor = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if tensor is not None and tensor.device.type == "meta":
            name = getattr(func, "__name__", "")
            to_cpu = name == "to" and any(isinstance(a, (str, torch.device)) and torch.device(a).type == "cpu"
                                          for a in (*args[1:], kwargs.get("device")) if a is not None)
            if name in ("__float__", "item"):
                return 0.0
            if name in ("__int__", "__index__"):  # a count (a rank, a length): 1 keeps what it sizes non-empty
                return 1
            if name == "__bool__":
                return False
            if name == "cpu" or to_cpu:
                return torch.zeros(tensor.shape, dtype=kwargs.get("dtype", tensor.dtype))
            if name == "numpy":
                return torch.zeros(tensor.shape, dtype=tensor.dtype).numpy()
        return func(*args, **kwargs)


@contextlib.contextmanager
def on_meta(model: torch.nn.Module) -> Iterator[torch.device]:
    """Stands in for :func:`companion.core.train.on_device` with the meta device; the model comes back to the CPU
    with every tensor zero (the meta tensors had no values to bring back)."""
    with torch._C.DisableTorchFunction():  # the moves pair each tensor with its copy on the other device
        model.to(META)
    try:
        yield META
    finally:
        with torch._C.DisableTorchFunction():
            model.to_empty(device="cpu")
            for tensor in (*model.parameters(), *model.buffers()):
                tensor.detach().zero_()


@contextlib.contextmanager
def on_fake_meta(model: torch.nn.Module) -> Iterator[torch.device]:
    """Stands in for :func:`companion.core.train.on_device`: the model's tensors become fake tensors on the meta
    device, and everything until the context ends runs on fake tensors (CPU scalars allowed, as on a GPU)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode(allow_non_fake_inputs=True):
        for group in (model._parameters, model._buffers):
            for name, t in list(group.items()):
                moved = torch.empty_like(t, device=META)
                group[name] = torch.nn.Parameter(moved) if isinstance(t, torch.nn.Parameter) else moved
        yield META


def steps_only(records: list[dict[str, Any]], updates: int = 2, *, recorded: bool = True) -> Callable[..., History]:
    """A stand-in for the engine's ``run``: ``updates`` updates, then one record appended to ``records`` (an empty
    one where the trainer's record reads numbers: ``recorded=False``); it returns a one-record history of zeros
    shaped like the record, for whatever the trainer computes from its history afterwards."""

    def run(update: Callable[[int], Any], *, steps: int, record: Callable[[int], dict[str, Any]],
            **options: Any) -> History:
        for step in range(updates):
            update(step)
        row = record(updates) if recorded else {}
        records.append(row)
        # what the trainer reads afterwards: a history of one record with the record's shapes, filled with zeros
        zeros = {name: torch.zeros(value.shape, dtype=value.dtype).numpy() if isinstance(value, torch.Tensor)
                 else np.zeros(np.shape(value)) for name, value in row.items()}
        return History.from_rows([updates], [zeros])

    return run
