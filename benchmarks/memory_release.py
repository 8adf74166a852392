"""Memory and time of a long training run with and without handing freed memory back (:mod:`companion.kit.memory`).

The run is chapter 9's widest member group of the full profile, cut short: 100 two-layer tanh nets of width 500,
full-batch GD on the 64 points of 图9.1's task (:func:`companion.experiments.ch09_embedding.train_batch`), one torch
thread, records every 100 steps.  Each variant runs in a fresh process (so that one does not inherit the other's
heap), the two alternate, and the script prints the resident memory each gained and its seconds, and their ratios.
Measured on the 2-core AMD EPYC (2026-12-01, commit after f4e5a53, 2000 steps, one run each): without release
+0.93 GB in 116 s, with it +0.05 GB in 124 s (time ratio 1.07; a second pair at 1000 steps, trimming every 100 steps:
40.7 s without, 39.0 s with).  The full profile runs 40 000 steps: two runs side by side grew to 12 GB each and one was
killed for lack of memory, before the release existed.

Run: ``python benchmarks/memory_release.py [--steps 2000] [--repeats 1]`` (about 3 minutes on one core).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys


def child(steps: int, release: bool) -> None:
    """One run in this process; prints {"growth_gb", "seconds"} as JSON."""
    import time

    import torch

    from companion.experiments import ch09_embedding as emb
    from companion.kit import memory

    torch.set_num_threads(1)
    if not release:
        memory.RELEASE_EVERY_SECONDS = float("inf")  # the first step releases once, then never again
    x, xa, y = emb.three_tanh_target()
    a, w, widths = emb.init_batch([500], 100, xa.shape[1], y.shape[1], 1e-3, torch.Generator().manual_seed(0),
                                  xa.dtype)

    def resident_gb() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**30

    before, start = resident_gb(), time.perf_counter()
    emb.train_batch(xa, y, a, w, widths, lr=0.1, steps=steps, record_every=100, progress=False)
    print(json.dumps({"growth_gb": resident_gb() - before, "seconds": time.perf_counter() - start}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2000, help="GD steps per run (default 2000)")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each variant (default 1)")
    parser.add_argument("--child", choices=("on", "off"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        print(f"--steps and --repeats must be positive integers, got {args.steps} and {args.repeats}", file=sys.stderr)
        return 2
    if args.child:
        child(args.steps, args.child == "on")
        return 0
    if not sys.platform.startswith("linux"):
        print("this benchmark reads /proc and measures glibc's allocator: run it on Linux", file=sys.stderr)
        return 2
    results: dict[str, list[dict]] = {"off": [], "on": []}
    for _ in range(args.repeats):
        for variant in ("off", "on"):
            out = subprocess.run([sys.executable, __file__, "--steps", str(args.steps), "--child", variant],
                                 capture_output=True, text=True, check=True)
            results[variant].append(json.loads(out.stdout.strip().splitlines()[-1]))
    mean = {v: {k: sum(r[k] for r in rs) / len(rs) for k in ("growth_gb", "seconds")} for v, rs in results.items()}
    print(f"{args.steps} steps of 100 nets of width 500 (ch09's full profile, one thread), {args.repeats} run(s) each")
    print("| freed memory | resident memory gained | seconds |")
    print("|---|---|---|")
    for variant, label in (("off", "kept by malloc"), ("on", "released (companion.kit.memory)")):
        print(f"| {label} | {mean[variant]['growth_gb']:+.2f} GB | {mean[variant]['seconds']:.1f} |")
    print(f"time with release / without: {mean['on']['seconds'] / mean['off']['seconds']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
