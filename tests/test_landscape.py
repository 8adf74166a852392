"""Tests of companion.core.landscape: HVPs, eigenvalues and inertia against dense references."""

import numpy as np
import pytest
import torch

from companion.core import landscape as L
from companion.core.nets import MLP


def quadratic(h: np.ndarray):
    ht = torch.as_tensor(h)
    return lambda th: 0.5 * th @ ht @ th


@pytest.fixture
def sym():
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    lam = np.array([-3.0, -1.0, 0.0, 0.0, 0.5, 1.0, 2.0, 5.0])
    return q @ np.diag(lam) @ q.T, lam


def test_hvp_matches_dense(sym):
    h, _ = sym
    f = quadratic(h)
    theta = torch.randn(8, dtype=torch.float64)
    v = torch.randn(8, dtype=torch.float64)
    assert np.allclose(L.hvp(f, theta, v).numpy(), h @ v.numpy(), atol=1e-12)
    assert np.allclose(L.hvp(f, theta, v, mode="reverse").numpy(), h @ v.numpy(), atol=1e-12)
    assert np.allclose(L.full_hessian(f, theta), h, atol=1e-12)
    with pytest.raises(ValueError, match="shape"):
        L.hvp(f, theta, torch.zeros(3, dtype=torch.float64))
    with pytest.raises(ValueError, match="mode"):
        L.hvp(f, theta, v, mode="sideways")


def test_eigenvalues(sym):
    h, lam = sym
    f = quadratic(h)
    theta = torch.zeros(8, dtype=torch.float64)
    assert np.allclose(L.hessian_spectrum(f, theta), lam, atol=1e-10)
    top, v = L.top_eigenvalue(f, theta, iters=500, tol=1e-12, generator=torch.Generator().manual_seed(0))
    assert abs(top - 5.0) < 1e-6
    warm, _ = L.top_eigenvalue(f, theta, v0=v, iters=3)
    assert abs(warm - 5.0) < 1e-8
    reverse, _ = L.top_eigenvalue(f, theta, v0=v, iters=3, mode="reverse")
    assert abs(reverse - 5.0) < 1e-8
    assert np.allclose(L.extreme_eigenvalues(f, theta, k=2, which="SA"), [-3.0, -1.0], atol=1e-8)
    assert np.allclose(L.extreme_eigenvalues(f, theta, k=1, which="LA"), [5.0], atol=1e-8)
    with pytest.raises(ValueError, match="which"):
        L.extreme_eigenvalues(f, theta, which="XX")
    tr = L.hutchinson_trace(f, theta, n_samples=2000, generator=torch.Generator().manual_seed(1))
    assert abs(tr - lam.sum()) < 0.5


def test_inertia_and_threshold(sym):
    _, lam = sym
    c = L.inertia(lam, 1e-9)
    assert c.as_tuple() == (2, 2, 4)
    assert L.inertia(lam, 0.75).as_tuple() == (2, 3, 3)
    with pytest.raises(ValueError, match="threshold"):
        L.inertia(lam, -1.0)
    f = lambda th: (th**2).sum()  # noqa: E731
    theta = torch.full((4,), 1e-6, dtype=torch.float64)
    assert L.zero_threshold(f, theta, factor=1e3) == pytest.approx(1e3 * 2e-6 * 2)
    assert L.zero_threshold(f, torch.zeros(4, dtype=torch.float64)) == 1e-11


def test_module_loss_roundtrip():
    torch.manual_seed(0)
    net = MLP([2, 5, 1], init_std=0.5).double()
    x = torch.randn(7, 2, dtype=torch.float64)
    y = torch.randn(7, 1, dtype=torch.float64)
    theta, unflatten = L.flatten_params(net)
    assert theta.shape == (sum(p.numel() for p in net.parameters()),)
    f = L.module_loss(net, lambda out: ((out - y) ** 2).mean(), x)
    assert float(f(theta)) == pytest.approx(float(((net(x) - y) ** 2).mean()), rel=1e-12)
    loss = ((net(x) - y) ** 2).mean()
    g = torch.cat([t.reshape(-1) for t in torch.autograd.grad(loss, list(net.parameters()))])
    assert torch.allclose(L.gradient(f, theta), g, atol=1e-12)
    L.load_flat(net, theta * 2)
    assert torch.allclose(L.flatten_params(net)[0], theta * 2)
    with pytest.raises(ValueError, match="flat vector"):
        unflatten(torch.zeros(3))


def test_subspace_iteration_finds_each_blocks_top_eigenpairs():
    """A batch (K, k, D) of k start vectors per block: the k eigenpairs largest in magnitude of each block of a
    block-diagonal H, values descending, vectors orthonormal and Hu = λu."""
    gen = torch.Generator().manual_seed(0)
    q = torch.linalg.qr(torch.randn(2, 6, 6, generator=gen, dtype=torch.float64)).Q
    spectra = torch.tensor([[5.0, 3.0, 0.1, 0.05, -0.2, 0.0], [0.3, -0.1, 7.0, 0.2, 4.0, 0.1]], dtype=torch.float64)
    blocks = q @ torch.diag_embed(spectra) @ q.transpose(1, 2)                              # (2, 6, 6)
    v0 = torch.randn(2, 2, 6, generator=gen, dtype=torch.float64)

    def matvec(v):   # (K, k, D)
        return torch.einsum("kij,kmj->kmi", blocks, v)

    values, vectors = L.subspace_iteration(matvec, v0, iters=200)
    assert values.tolist() == [pytest.approx([5.0, 3.0], rel=1e-8), pytest.approx([7.0, 4.0], rel=1e-8)]
    assert torch.allclose(vectors @ vectors.transpose(1, 2), torch.eye(2, dtype=torch.float64).expand(2, 2, 2))
    assert torch.allclose(matvec(vectors), values[..., None] * vectors, atol=1e-8)
    with pytest.raises(ValueError, match="iters"):
        L.subspace_iteration(matvec, v0, iters=0)
    with pytest.raises(ValueError, match="k ≤ D"):
        L.subspace_iteration(matvec, torch.ones(7, 6, dtype=torch.float64), iters=1)


def test_power_iteration_batched_rows_are_independent_problems():
    """One batch of K start vectors = K separate power iterations on the blocks of a block-diagonal H."""
    blocks = torch.stack([torch.diag(torch.tensor([3.0, 1.0, 0.5], dtype=torch.float64)),
                          torch.diag(torch.tensor([0.2, -4.0, 1.0], dtype=torch.float64))])  # (2, 3, 3)
    v0 = torch.ones(2, 3, dtype=torch.float64)
    lam, norm, v = L.power_iteration(lambda u: torch.einsum("kij,kj->ki", blocks, u), v0, iters=200, tol=1e-12)
    assert lam.tolist() == pytest.approx([3.0, -4.0], rel=1e-6)
    assert norm.tolist() == pytest.approx([3.0, 4.0], rel=1e-6)
    assert torch.allclose(v.norm(dim=1), torch.ones(2, dtype=torch.float64))
    with pytest.raises(ValueError, match="generator"):
        L.top_eigenvalue(lambda t: (t ** 2).sum(), torch.ones(3))
