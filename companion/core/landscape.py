"""Loss-landscape tools: Hessian-vector products, extreme eigenvalues, full spectra, inertia counts.

Shared by the embedding principle (ch. 9, 图9.7: how splitting a critical point changes the
numbers of negative, zero and positive Hessian eigenvalues) and flatness (ch. 11: sharpness
λ_max(H), the Edge of Stability 2/η).  Everything works on a *loss as a function of one flat
parameter vector* ``f: θ ∈ R^D ↦ R`` so that the same code serves any model:

    theta, unflatten = flatten_params(model)            # θ of shape (D,)
    f = module_loss(model, lambda out: ((out - y) ** 2).mean(), x)
    lam, v = top_eigenvalue(f, theta)                  # sharpness, warm-startable with v
    lo = extreme_eigenvalues(f, theta, k=2, which="SA")  # most negative (saddles)
    eigs = hessian_spectrum(f, theta.double())         # ≤ ~2000 parameters, float64
    counts = inertia(eigs, zero_threshold(f, theta))   # (negative, zero, positive)

Conventions.  ``f`` must be a pure function of its argument (built from torch.func-compatible
operations).  The Hessian H = ∇²f(θ) is D × D; H v is computed forward-over-reverse,
``jvp(grad(f))``, so one product costs about two backward passes and never forms H.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch
from torch import Tensor, nn
from torch.func import functional_call, grad, hessian, jvp

if TYPE_CHECKING:
    from scipy.sparse.linalg import LinearOperator

LossFn = Callable[[Tensor], Tensor]
EIGSH_WHICH = ("LA", "SA", "LM")


def flatten_params(module: nn.Module) -> tuple[Tensor, Callable[[Tensor], dict[str, Tensor]]]:
    """The module's parameters as one detached flat vector θ (D,) and the map θ ↦ {name: tensor}.

    The dict returned by ``unflatten(θ)`` can be passed to :func:`torch.func.functional_call`;
    its tensors are views of θ, so gradients flow back to the flat vector.
    """
    names, shapes, sizes = [], [], []
    for name, p in module.named_parameters():
        names.append(name)
        shapes.append(p.shape)
        sizes.append(p.numel())
    if not names:
        raise ValueError("the module has no parameters to flatten")
    theta = torch.cat([p.detach().reshape(-1) for p in module.parameters()])

    def unflatten(vec: Tensor) -> dict[str, Tensor]:
        if vec.shape != (sum(sizes),):
            raise ValueError(f"expected a flat vector of shape ({sum(sizes)},), got {tuple(vec.shape)}")
        return {n: c.reshape(s) for n, c, s in zip(names, torch.split(vec, sizes), shapes)}

    return theta, unflatten


def load_flat(module: nn.Module, theta: Tensor) -> None:
    """Copy the flat vector θ back into the module's parameters (in place)."""
    _, unflatten = flatten_params(module)
    with torch.no_grad():
        for name, value in unflatten(theta.to(next(module.parameters()).dtype)).items():
            module.get_parameter(name).copy_(value)


def module_loss(module: nn.Module, loss_of_output: Callable[[Tensor], Tensor], x: Tensor) -> LossFn:
    """f(θ) = loss_of_output(module_θ(x)) as a pure function of the flat vector θ.

    The dtype of θ decides the computation's precision: pass ``theta.double()`` (and float64 data)
    to count eigenvalues in float64; ``x`` is cast to θ's dtype on each call.
    """
    _, unflatten = flatten_params(module)

    def f(theta: Tensor) -> Tensor:
        return loss_of_output(functional_call(module, unflatten(theta), (x.to(theta.dtype),)))

    return f


def gradient(f: LossFn, theta: Tensor) -> Tensor:
    """∇f(θ), shape (D,)."""
    return grad(f)(theta)


HVP_MODES = ("forward", "reverse")


def hvp(f: LossFn, theta: Tensor, v: Tensor, *, mode: str = "forward") -> Tensor:
    """The Hessian-vector product ∇²f(θ) v; shape (D,).

    ``mode="forward"``: forward-over-reverse (jvp of grad), composable with ``vmap``.  ``mode="reverse"``:
    reverse-over-reverse, ∇_θ(∇f(θ)·v) by two autograd passes — the same product to rounding, not
    vmap-able, about twice as fast for small tanh MLPs on a CPU (torch.func's forward mode runs some
    derivatives, e.g. of tanh's backward, as Python decompositions: 7.6 vs 3.9 ms for ch. 11's
    64-64-64-64-10 net on 128 digits).
    """
    if v.shape != theta.shape:
        raise ValueError(f"v has shape {tuple(v.shape)} but θ has shape {tuple(theta.shape)}")
    if mode == "forward":
        return jvp(grad(f), (theta,), (v.to(theta.dtype),))[1]
    if mode != "reverse":
        raise ValueError(f"unknown mode {mode!r}; choose one of {', '.join(HVP_MODES)}")
    with torch.enable_grad():
        th = theta.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(f(th), th, create_graph=True)
        (hv,) = torch.autograd.grad(g @ v.to(theta.dtype), th)
    return hv


def hessian_operator(f: LossFn, theta: Tensor) -> LinearOperator:
    """H = ∇²f(θ) as a float64 :class:`scipy.sparse.linalg.LinearOperator` of HVPs (for eigsh)."""
    from scipy.sparse.linalg import LinearOperator  # scipy.sparse costs 1.2 s to import: only where it is used
    theta = theta.detach()
    d = theta.numel()

    def matvec(v: np.ndarray) -> np.ndarray:
        vt = torch.as_tensor(np.asarray(v, dtype=np.float64).reshape(-1), dtype=theta.dtype)
        return hvp(f, theta, vt).detach().cpu().double().numpy()

    return LinearOperator((d, d), matvec=matvec, rmatvec=matvec, dtype=np.float64)


def power_iteration(matvec: Callable[[Tensor], Tensor], v0: Tensor, *, iters: int,
                    tol: float = 0.0) -> tuple[Tensor, Tensor, Tensor]:
    """Power iteration v ← Hv/‖Hv‖ for the eigenvalue of a symmetric H largest in magnitude.

    The one power iteration of the package.  ``v0`` is one start vector (D,) or a batch (K, D) of
    independent problems: ``matvec`` then applies a block-diagonal operator, each row by its own
    block (the Hessian of K networks that share no parameter), and every quantity is per row.
    Returns (Rayleigh quotient vᵀHv, ‖Hv‖, unit v) of the last iteration; it stops after ``iters``
    products, or earlier when every row's Rayleigh quotient changed by at most ``tol`` (relative).
    A row with Hv = 0 gets 0 and keeps its vector.
    """
    if iters < 1:
        raise ValueError(f"iters must be ≥ 1, got {iters}")
    v = v0 / v0.norm(dim=-1, keepdim=True).clamp_min(1e-300)
    rayleigh = torch.full(v.shape[:-1], float("nan"), dtype=v.dtype, device=v.device)
    for _ in range(iters):
        hv = matvec(v)
        new = (hv * v).sum(dim=-1)
        norm = hv.norm(dim=-1)
        zero = norm == 0
        new = torch.where(zero, torch.zeros_like(new), new)
        v = torch.where(zero.unsqueeze(-1), v, hv / norm.clamp_min(1e-300).unsqueeze(-1))
        settled = bool(((new - rayleigh).abs() <= tol * new.abs().clamp_min(1e-30)).all()) or bool(zero.all())
        rayleigh = new
        if settled:
            break
    return rayleigh, norm, v


def subspace_iteration(matvec: Callable[[Tensor], Tensor], v0: Tensor, *, iters: int) -> tuple[Tensor, Tensor]:
    """The k eigenpairs of a symmetric H largest in magnitude, by subspace (block power) iteration
    V ← orth(HV) with a Rayleigh–Ritz step at the end: the eigenpairs of the k × k matrix VᵀHV.

    :func:`power_iteration` for k vectors at once.  ``v0`` is (k, D), or a batch (K, k, D) of independent
    problems (the Hessians of K networks that share no parameter); ``matvec`` maps (…, k, D) to (…, k, D), each
    row by its own problem's H.  Returns (Ritz values (…, k), descending, and their unit Ritz vectors (…, k, D),
    orthonormal rows) after ``iters`` block products; warm-start with the vectors of a previous call.
    """
    if iters < 1:
        raise ValueError(f"iters must be ≥ 1, got {iters}")
    if v0.ndim < 2 or v0.shape[-2] > v0.shape[-1]:
        raise ValueError(f"v0 must be (k, D) or (K, k, D) with k ≤ D, got shape {tuple(v0.shape)}")
    q = torch.linalg.qr(v0.transpose(-1, -2)).Q.transpose(-1, -2)          # (…, k, D), orthonormal rows
    for i in range(iters):
        hq = matvec(q)
        if i < iters - 1:
            q = torch.linalg.qr(hq.transpose(-1, -2)).Q.transpose(-1, -2)
    t = q @ hq.transpose(-1, -2)                                            # (…, k, k) = VᵀHV
    values, s = torch.linalg.eigh(0.5 * (t + t.transpose(-1, -2)))          # ascending
    values, s = values.flip(-1), s.flip(-1)
    return values, s.transpose(-1, -2) @ q


def top_eigenvalue(f: LossFn, theta: Tensor, v0: Tensor | None = None, *, iters: int = 20,
                   tol: float = 1e-4, generator: torch.Generator | None = None,
                   mode: str = "forward") -> tuple[float, Tensor]:
    """The eigenvalue of H = ∇²f(θ) largest in magnitude, by :func:`power_iteration`; returns (λ, unit v).
    ``mode`` picks the Hessian-vector product of :func:`hvp`.

    Warm start: pass the ``v`` returned at the previous call as ``v0`` — along a training run H
    changes slowly, so 5–10 iterations suffice (ch. 11 tracks the sharpness λ_max this way).
    Stops when successive Rayleigh quotients agree to ``tol`` (relative) or after ``iters``.
    At a minimum this is λ_max; at a saddle it may be the most negative eigenvalue — use
    :func:`extreme_eigenvalues` with ``which="LA"``/``"SA"`` there.  The products run on θ's device; a random
    start is drawn on the CPU from ``generator`` and moved there.
    """
    theta = theta.detach()
    if v0 is None:
        if generator is None:
            raise ValueError("top_eigenvalue needs a start vector v0 or a generator to draw one from")
        v = torch.randn(theta.shape, generator=generator, dtype=theta.dtype).to(theta.device)  # a CPU stream
    else:
        if v0.shape != theta.shape:
            raise ValueError(f"v0 has shape {tuple(v0.shape)} but θ has shape {tuple(theta.shape)}")
        v = v0.detach().to(theta.dtype).clone()
    lam, _, v = power_iteration(lambda u: hvp(f, theta, u, mode=mode), v, iters=iters, tol=tol)
    return float(lam), v


def extreme_eigenvalues(f: LossFn, theta: Tensor, k: int = 1, which: str = "LA", *,
                        tol: float = 1e-8, v0: np.ndarray | None = None) -> np.ndarray:
    """The k largest (``"LA"``), smallest/most negative (``"SA"``) or largest-|λ| (``"LM"``)
    eigenvalues of H by Lanczos (scipy ``eigsh``) on a LinearOperator of HVPs, sorted ascending.
    """
    if which not in EIGSH_WHICH:
        raise ValueError(f"unknown which={which!r}; choose one of {', '.join(EIGSH_WHICH)}")
    d = theta.numel()
    if not 1 <= k < d:
        raise ValueError(f"k must lie in [1, {d - 1}] for {d} parameters, got {k}")
    from scipy.sparse.linalg import eigsh

    vals = eigsh(hessian_operator(f, theta), k=k, which=which, tol=tol, v0=v0, return_eigenvectors=False)
    return np.sort(vals)


def full_hessian(f: LossFn, theta: Tensor) -> np.ndarray:
    """The dense Hessian ∇²f(θ) (D × D, symmetrised) as a NumPy array; meant for D ≲ 2000.

    Computed in θ's dtype: pass a float64 θ (see :func:`module_loss`) to count eigenvalues.
    """
    h = hessian(f)(theta.detach()).detach().cpu().double().numpy()
    return 0.5 * (h + h.T)


def hessian_spectrum(f: LossFn, theta: Tensor) -> np.ndarray:
    """All eigenvalues of ∇²f(θ), ascending (dense eigvalsh in float64)."""
    return np.linalg.eigvalsh(full_hessian(f, theta))


@dataclass(frozen=True)
class Inertia:
    """Numbers of negative, (numerically) zero and positive Hessian eigenvalues at a threshold."""

    negative: int
    zero: int
    positive: int
    threshold: float

    def as_tuple(self) -> tuple[int, int, int]:
        return self.negative, self.zero, self.positive


def inertia(eigenvalues: np.ndarray, threshold: float) -> Inertia:
    """Count λ < −threshold, |λ| ≤ threshold and λ > threshold."""
    if not threshold >= 0:
        raise ValueError(f"threshold must be non-negative, got {threshold}")
    lam = np.asarray(eigenvalues, dtype=float)
    neg = int((lam < -threshold).sum())
    pos = int((lam > threshold).sum())
    return Inertia(neg, lam.size - neg - pos, pos, float(threshold))


def zero_threshold(f: LossFn, theta: Tensor, factor: float = 1e3, floor: float = 1e-11) -> float:
    """A zero-eigenvalue threshold tied to the gradient: max(floor, factor·‖∇f(θ)‖₂).

    At an inexact critical point (‖∇f‖ = ε) the Hessian's "zero" eigenvalues are perturbed by
    O(ε) and worse (degenerate directions); counting |λ| ≤ 10³ ε as zero keeps counts stable.
    """
    if not factor > 0 or not floor >= 0:
        raise ValueError(f"factor must be positive and floor non-negative, got factor={factor}, floor={floor}")
    return max(float(floor), float(factor) * float(gradient(f, theta.detach()).norm()))


def hutchinson_trace(f: LossFn, theta: Tensor, n_samples: int = 20, *,
                     generator: torch.Generator | None = None) -> float:
    """Tr H ≈ mean of vᵀHv over Rademacher vectors v (Hutchinson's estimator), drawn on the CPU from ``generator``
    and moved to θ's device."""
    if n_samples < 1:
        raise ValueError(f"n_samples must be ≥ 1, got {n_samples}")
    if generator is None:
        raise ValueError("hutchinson_trace needs a generator to draw its probe vectors from")
    theta = theta.detach()
    total = 0.0
    for _ in range(n_samples):
        v = (torch.randint(0, 2, theta.shape, generator=generator).to(theta.dtype) * 2 - 1).to(theta.device)
        total += float(torch.dot(v, hvp(f, theta, v)))
    return total / n_samples
