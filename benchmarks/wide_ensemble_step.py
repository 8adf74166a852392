"""What a gradient step of 图7.5(b)'s widest nets costs on one CPU thread, and what other ways of computing it save.

Chapter 7's full profile trains the digits' three nets (γ = 0.5, 1, 1.75 on γ′ = 0; d = 64, n = 100, float32) at
widths up to m = 64 000 as one :class:`~companion.core.ensemble.TwoLayerEnsemble`, full-batch GD with the
Hessian-adaptive step (:func:`~companion.core.ensemble.train_ensemble`): more than 30 000 steps for the condensed net,
hours on a CPU (``docs/full-profile.md``, chapter 7).  The hidden activations, K × n × m floats (77 MB at K = 3),
no longer stay in the cache; this script measures, on the same weights, whether computing a step differently helps:

- ``batched``: the package's step, autograd through ``_risk`` over all K members at once;
- ``per member``: the same autograd step, one member at a time (a third of the activations at once);
- ``chunked``: the gradient by hand, in two passes over blocks of neurons (outputs first, then each block's
  gradient from its recomputed pre-activations), so that a block's activations stay in the cache;
- ``hessian``: one step-size estimate (:func:`~companion.core.ensemble.hessian_norms`, 8 Hessian-vector products),
  made every 100 steps, so a hundredth of it per step.

Ratios to ``batched`` in the same run; the chunked gradient is checked against autograd's.  Run:
``python benchmarks/wide_ensemble_step.py [--width 64000] [--repeats 5]`` (about a minute).
"""

from __future__ import annotations

import argparse
import time

import torch

from companion.core.ensemble import TwoLayerEnsemble, _risk, augment, hessian_norms
from companion.experiments.ch07_phase import digits_points, scales
from companion.kit.seeds import generator


def seconds(fn, repeats: int) -> float:
    fn()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    return (time.perf_counter() - start) / repeats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--width", type=int, default=64_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--block", type=int, default=4096, help="neurons per block of the chunked gradient")
    args = parser.parse_args()
    torch.set_num_threads(1)
    x, y = digits_points(n=100, seed=0, dtype=torch.float32)
    xt, yt = augment(x, True), y.reshape(1, -1)
    for gammas in ((0.5, 1.0, 1.75), (1.75,)):
        b1, b2, alpha = zip(*(scales(g, 0.0, args.width) for g in gammas))
        net = TwoLayerEnsemble(x.shape[1], args.width, beta1=b1, beta2=b2, alpha=alpha, dtype=torch.float32, seed=1)
        a, w = net.a.detach().clone().requires_grad_(True), net.w.detach().clone().requires_grad_(True)
        k, n = len(gammas), len(x)

        def batched():
            return torch.autograd.grad(_risk(net, a, w, net.alpha, net.mask, xt, yt).sum(), [a, w])

        def per_member():
            return [torch.autograd.grad(_risk(net, a[j:j + 1], w[j:j + 1], net.alpha[j:j + 1], net.mask[j:j + 1],
                                              xt, yt).sum(), [a, w]) for j in range(k)]

        @torch.no_grad()
        def chunked():
            blocks = range(0, args.width, args.block)
            out = sum(torch.bmm(torch.relu(torch.matmul(xt, w[:, s:s + args.block].transpose(1, 2))),
                                a[:, s:s + args.block, None]).squeeze(-1) for s in blocks)
            r = (out / net.alpha[:, None] - yt) / (n * net.alpha[:, None])  # ∂R_S/∂(Σ_j a_j h_j), per member
            ga, gw = torch.empty_like(a), torch.empty_like(w)
            for s in blocks:
                pre = torch.matmul(xt, w[:, s:s + args.block].transpose(1, 2))  # (K, n, block)
                ga[:, s:s + args.block] = torch.bmm(r[:, None], torch.relu(pre)).squeeze(1)
                back = r[:, :, None] * a[:, None, s:s + args.block] * (pre > 0)
                gw[:, s:s + args.block] = torch.bmm(back.transpose(1, 2), xt.expand(k, -1, -1))
            return ga, gw

        exact, mine = batched(), chunked()
        error = max(float((e - g).norm() / e.norm()) for e, g in zip(exact, mine))
        times = {"batched": seconds(batched, args.repeats), "per member": seconds(per_member, args.repeats),
                 "chunked": seconds(chunked, args.repeats),
                 "hessian": seconds(lambda: hessian_norms(
                     lambda a_, w_: _risk(net, a_, w_, net.alpha, net.mask, xt, yt).sum(), a, w, iters=8,
                     generator=generator(0)), 1)}
        print(f"K = {k}, m = {args.width}: " + ", ".join(
            f"{name} {t:.3f} s ({times['batched'] / t:.2f}×)" for name, t in times.items())
              + f"; chunked gradient against autograd's: relative error {error:.1e}", flush=True)


if __name__ == "__main__":
    main()
