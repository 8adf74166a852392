"""Which training steps read a number back from the device: the host–device syncs of the full profile, found on a CPU.

On a GPU, every value a training step reads on the host (``loss.item()``, ``float(t)``, ``if (t > 0).any():``,
``t.cpu()``, ``t.numpy()``, a boolean-mask index, ``nonzero``) waits for every kernel queued before it, and so does
an ordinary copy of a CPU tensor to the GPU (``t.to(device)`` from pageable memory: a random draw made on the CPU
for the same numbers on every machine, a constant kept there): the GPU idles while Python catches up, at every step.
Issue #40 (item 1) asks for these to go.  They cannot be timed without a GPU, but they can be **counted** on a CPU:
this script runs a chapter's full-profile smoke (``--profile full --smoke``: the full profile's shapes and code
paths, a few recording intervals of steps) in this process under a :class:`~torch.overrides.TorchFunctionMode` that
counts those calls, and tells one made inside an update of the training engine
(:func:`companion.core.train.run`'s ``update(step)``, once per step) from one made in a record (every
``record_every`` steps, where reading is the point) or outside training (the analysis).

On the CPU the settings' device is the CPU, so a copy to it is counted as ``to`` with a CPU target, and every read is
of a CPU tensor: the count is of the calls that *would* wait on a GPU if their tensor lived there.  A read of a
tensor the code keeps on the host on purpose (a member's "converged" flags, a step count) waits for nothing; the
listed lines say which is which.  A read inside ``torch.optim`` is listed under its caller with the optimiser's
frame (L-BFGS reads its line search's values), except an optimiser's read of its step count (``_get_value``):
PyTorch keeps it on the CPU unless ``capturable``.

For each chapter it prints the number of updates, the calls made inside them, and the code lines they came from
(the innermost frame in the companion's package or the chapter's own cells), with the call's kind and count.

Run: ``python benchmarks/host_reads.py [ch04 ch07 …]`` (default: every chapter; each in a fresh process, about
as long as the chapter's smoke plus a third).  Measured on the 2-core CPU: see ``docs/full-profile.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: Tensor methods that hand a value to the host: on a GPU each waits for the kernels queued before it.
READS = ("item", "__float__", "__int__", "__bool__", "__index__", "tolist", "numpy", "__array__", "cpu",
         "nonzero", "masked_select", "unique", "__format__")
#: The frame of a read that waits for nothing: a torch optimiser's step count, kept on the CPU.
CPU_HELD = "(in torch.optim:_get_value)"


def _caller(frame) -> str:
    """``file:line`` of the innermost frame in the companion's package or a chapter's cell, with the innermost
    ``torch.optim`` frame below it named (its reads are of CPU-held step counts)."""
    optim = None
    while frame is not None:
        path = frame.f_code.co_filename
        if "torch/optim" in path and optim is None:
            optim = f"torch.optim:{frame.f_code.co_name}"
        if "/companion/" in path or path.startswith("<cell"):
            where = path.split("/companion/")[-1] if "/companion/" in path else path
            return f"{where}:{frame.f_lineno}" + (f" (in {optim})" if optim else "")
        frame = frame.f_back
    return "(outside the companion)"


def child(chapter: str) -> None:
    """Run ``chapter``'s full-profile smoke in this process, counting reads; print one JSON line."""
    import matplotlib

    matplotlib.use("Agg")
    import torch
    from torch.overrides import TorchFunctionMode

    import companion.core.train as engine

    class CountReads(TorchFunctionMode):
        def __init__(self) -> None:
            super().__init__()
            self.where = "outside"          # "update", "record" or "outside" training
            self.counts: dict[str, Counter] = {"update": Counter(), "record": Counter(), "outside": Counter()}

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            name = getattr(func, "__name__", "")
            read = name in READS
            if name == "to":        # a copy to the settings' device: the CPU here, a GPU elsewhere
                read = any(isinstance(a, (str, torch.device)) and torch.device(a).type == "cpu"
                           for a in (*args[1:], kwargs.get("device")) if a is not None)
            elif name == "__getitem__" and len(args) > 1:   # a boolean mask: its size is read on the host
                index = args[1] if isinstance(args[1], tuple) else (args[1],)
                read = any(isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in index)
                name = "bool-mask index" if read else name
            if read:
                where = _caller(sys._getframe(1))
                if not where.endswith(CPU_HELD):
                    self.counts[self.where][f"{where} · {name}"] += 1
            return func(*args, **kwargs)

    counter = CountReads()
    updates = 0
    original_run = engine.run

    def counting_run(update, **options):
        def counted_update(step):
            nonlocal updates
            previous, counter.where = counter.where, "update"
            try:
                update(step)
            finally:
                counter.where = previous
            updates += 1

        def counted_record(step):
            previous, counter.where = counter.where, "record"
            try:
                return options["record"](step)
            finally:
                counter.where = previous

        return original_run(counted_update, **{**options, "record": counted_record})

    engine.run = counting_run   # before any experiment imports it by name
    from IPython.core.interactiveshell import InteractiveShell

    from companion.tools.runner import load_source

    source = min((ROOT / "chapters").glob(f"{chapter}*.py"))  # ch12 is ch12_anchor_functions, not ch12b
    shell = InteractiveShell.instance()
    start = time.perf_counter()
    with counter:
        for i, cell in enumerate(c for c in load_source(source).cells if c.cell_type == "code"):
            result = shell.run_cell(cell.source, silent=True)
            if not result.success:
                error = result.error_in_exec or result.error_before_exec
                raise SystemExit(f"{chapter}: code cell {i} raised {error!r}")
    print(json.dumps({"chapter": source.stem, "updates": updates, "seconds": time.perf_counter() - start,
                      **{k: dict(v.most_common()) for k, v in counter.counts.items()}}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("chapters", nargs="*", help="chapter prefixes (default: every chapter)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--top", type=int, default=8, help="code lines listed per chapter (default 8)")
    args = parser.parse_args()
    if args.child:
        return child(args.child)
    chapters = args.chapters or sorted(p.stem for p in (ROOT / "chapters").glob("*.py"))
    print("| chapter | updates | reads in updates | per update | where (kind: count) |")
    print("|---|---|---|---|---|")
    for chapter in chapters:
        with tempfile.TemporaryDirectory() as cache:
            env = os.environ | {"COMPANION_PROFILE": "full", "COMPANION_SMOKE": "1", "COMPANION_CACHE": cache,
                                "COMPANION_THREADS": os.environ.get("COMPANION_THREADS", "1"), "CI": "1"}
            done = subprocess.run([sys.executable, __file__, "--child", chapter], env=env, capture_output=True,
                                  text=True, cwd=ROOT / "chapters")
        lines = [line for line in done.stdout.splitlines() if line.startswith('{"chapter"')]
        if done.returncode or not lines:
            print(f"| {chapter} | failed: {(done.stderr.strip().splitlines() or ['no output'])[-1][:200]} | | | |")
            continue
        row = json.loads(lines[-1])
        reads = sum(row["update"].values())
        where = "; ".join(f"{k}: {v}" for k, v in list(row["update"].items())[:args.top])
        print(f"| {row['chapter']} | {row['updates']} | {reads} | {reads / max(row['updates'], 1):.2f} | {where} |",
              flush=True)


if __name__ == "__main__":
    main()
