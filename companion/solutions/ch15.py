"""Worked solutions for the exercises of chapter 15, neural networks for differential equations (神经网络求解微分方程).

Notebook: ``chapters/ch15_pinns.py``.  Equations are the book's: (15.4) the PINN loss, (15.12) Deep Ritz, (15.14)–(15.16)
the weak adversarial form (WAN), (15.18) −Δu = g on Ω = (−1, 1) with u(±1) = 0, (15.19) the grid Ritz loss.  Grid:
x_i = −1 + ih, h = 2/n, i = 0 … n.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from companion.solutions import Solution, collect, show

__all__ = ["SOLUTIONS", "solution", "fd_matrix", "jacobi_eigenvalue"]


def fd_matrix(n: int = 6) -> np.ndarray:
    """习题2: A of A u = h² g for the n − 1 interior unknowns of (15.18): tridiag(−1, 2, −1), (n−1) × (n−1)."""
    return 2 * np.eye(n - 1) - np.eye(n - 1, k=1) - np.eye(n - 1, k=-1)


def jacobi_eigenvalue(j: int, n: int) -> float:
    """习题3: the eigenvalue of the Jacobi iteration matrix ½ tridiag(1, 0, 1) for the mode v_i = sin(jπi/n): cos(jπ/n)."""
    return float(np.cos(j * np.pi / n))


def _jacobi_eigenvalue() -> Callable[[int, int], float]:
    return jacobi_eigenvalue


S2 = Solution(
    label="习题2",
    text=r"""
**The finite-difference scheme (有限差分格式) of (15.18).** Take $n = 6$ intervals of $[-1, 1]$: $h = 2/6 = 1/3$, nodes
$x_i = -1 + ih$, $i = 0,\dots,6$; the boundary values $u_0 = u_6 = 0$ are known, the unknowns are $u_1,\dots,u_5$.

1. Replace $u''(x_i)$ by the central difference $\big(u_{i-1} - 2u_i + u_{i+1}\big)/h^2$ (error $O(h^2)$). The equation
   $-u'' = g$ at $x_i$ becomes $\big(-u_{i-1} + 2u_i - u_{i+1}\big)/h^2 = g_i$, $i = 1,\dots,5$.
2. Multiply by $h^2$ and use $u_0 = u_6 = 0$ (for non-zero boundary data they would move to the right-hand side):
   $$A\mathbf u = h^2\mathbf g,\qquad A = \begin{pmatrix}
   2&-1&&&\\-1&2&-1&&\\&-1&2&-1&\\&&-1&2&-1\\&&&-1&2\end{pmatrix}.$$

**Structure:** tridiagonal (each node couples only to its neighbours: sparse, $O(n)$ storage), symmetric, constant
along diagonals (Toeplitz), weakly diagonally dominant and **positive definite**, with eigenvalues
$\lambda_j = 2 - 2\cos(j\pi/n) = 4\sin^2(j\pi/2n)$ and eigenvectors $v_j = (\sin(j\pi i/n))_i$, $j = 1,\dots,n-1$. The
condition number $\lambda_{n-1}/\lambda_1 \approx 4n^2/\pi^2$ grows like $h^{-2}$ — the root of the slow convergence of
simple iterations (习题3).
""",
    code="""\
n = 6
fd_matrix = 2 * np.eye(n - 1) - np.eye(n - 1, k=1) - np.eye(n - 1, k=-1)
print(fd_matrix)
print("eigenvalues:", np.round(np.linalg.eigvalsh(fd_matrix), 4),
      " 4 sin^2(j pi / 2n):", np.round(4 * np.sin(np.arange(1, n) * np.pi / (2 * n)) ** 2, 4))
check_fd_matrix(fd_matrix)""",
    answer=fd_matrix,
)

S3 = Solution(
    label="习题3",
    text=r"""
**The Jacobi iteration (雅可比迭代) and its modes.** Split $A = D - (L + U)$ with $D = 2I$ the diagonal. Jacobi solves
each equation for its diagonal unknown with the neighbours from the previous sweep:
$$u_i^{(k+1)} = \tfrac12\big(u_{i-1}^{(k)} + u_{i+1}^{(k)} + h^2 g_i\big),\qquad \mathbf u^{(k+1)} = B\mathbf u^{(k)}
+ \tfrac{h^2}{2}\mathbf g,
\quad B = I - D^{-1}A = \tfrac12\,\mathrm{tridiag}(1, 0, 1).$$

1. *Eigenvectors.* Try $v_i = \sin(j\pi i/n)$ (it vanishes at $i = 0$ and $i = n$, so the boundary rows need no special
   case). With $\sin(a - b) + \sin(a + b) = 2\sin a\cos b$:
   $$(Bv)_i = \tfrac12\big(\sin\tfrac{j\pi(i-1)}{n} + \sin\tfrac{j\pi(i+1)}{n}\big) =
   \cos\tfrac{j\pi}{n}\,\sin\tfrac{j\pi i}{n}.$$
2. *Eigenvalues.* $\mu_j = \cos(j\pi/n)$, $j = 1,\dots,n-1$ — the DST-I modes of the notebook's section 4.
3. *Convergence.* The error $\mathbf e^{(k)} = \mathbf u^{(k)} - \mathbf u$ obeys $\mathbf e^{(k+1)} = B\mathbf
   e^{(k)}$, so its component in
   mode $j$ is multiplied by $\mu_j$ every sweep. The spectral radius $\rho(B) = \cos(\pi/n) < 1$: Jacobi converges, but
   $\rho \approx 1 - \pi^2/(2n^2)$, so about $2n^2/\pi^2$ sweeps per e-fold (about 200 000 at $n = 1000$ for $j = 1$).
4. *Which modes are slow?* Those with $|\cos(j\pi/n)|$ near 1: the **lowest** ($j = 1, 2, \dots$) and, symmetrically,
   the
   highest grid modes ($j \to n$, $\mu_j \to -1$). The middle-to-high modes of a smooth solution are damped fastest —
   the opposite of the network's preference (section 4: at $n = 1000$ the error in mode 16 halves after about 550
   sweeps, in mode 2 after about 35 000). This is why a damped Jacobi is used as a smoother in multigrid, and why the
   network-then-Jacobi hybrid of section 5 works.
""",
    code="""\
jacobi_eigenvalue = lambda j, n: np.cos(j * np.pi / n)
n = 50
B = 0.5 * (np.eye(n - 1, k=1) + np.eye(n - 1, k=-1))
mu = np.sort(np.linalg.eigvalsh(B))[::-1]
print(np.allclose(mu, jacobi_eigenvalue(np.arange(1, n), n)))     # mu_j = cos(j pi / n), j = 1 .. n-1
print("sweeps per e-fold, j = 1, 2, 25:", [round(-1 / np.log(abs(jacobi_eigenvalue(j, n)))) for j in (1, 2, 25)])
check_jacobi_eigenvalues(jacobi_eigenvalue)""",
    answer=_jacobi_eigenvalue,
)

S4 = Solution(
    label="习题4 / 5",
    text=r"""
**The boundary penalty (边界惩罚) and hard constraints (硬约束).** Deep Ritz minimises
$E(u) = \int\tfrac12|u'|^2 - \int f u$ plus $\beta\,(u(-1)^2 + u(1)^2)$ (15.12), (15.19). The penalty only
*approximately*
imposes $u(\pm1) = 0$.

*习题4 — helping or competing?* The two terms compete. For finite $\beta$ the minimiser of the penalised energy is the
solution of a Robin problem ($\pm u' + 2\beta u = 0$ at $x = \pm1$), not of the Dirichlet problem: the boundary
values are
off by $O(1/\beta)$, and the error spreads into the interior (the energy trades a little boundary violation for a
lower $E$). Too large a $\beta$ makes the loss stiff — the boundary term dominates the gradient, the effective
condition number grows with $\beta$ and Adam spends its steps on two points.

Measured on the notebook's problem
(section 2: Deep Ritz, width 40, depth 3, 128 grid intervals, 1500 Adam steps at $3\cdot10^{-3}$, seed 0):

| $\beta$ | max error | where | error at $x = \pm1$ |
|---|---|---|---|
| 10 | 0.143 | $x = 1$ (the boundary) | 0.14, 0.14 |
| 1000 (the notebook's) | 0.0086 | $x = -0.89$ | 0.0016, 0.0016 |
| $10^5$ | 1.08 | $x = 0.37$ (interior) | 0.0002, 0.0003 |

With a small $\beta$ the boundary values are simply wrong (the Robin effect) and the error is largest there; with a
huge one the boundary is right but the interior is not fitted within the same budget — the error is 130 times that
at $\beta = 1000$, in the middle of the domain. So over-emphasising the boundary does not distort the physics of the
minimiser (which tends to the Dirichlet solution as $\beta \to \infty$), it ruins the *optimisation*; a moderate
$\beta$,
or a schedule that raises it, works best.

*习题5 — hard constraints.* Build the boundary data into the ansatz: $u_\theta(x) = (1 - x^2)\,N_\theta(x)$ vanishes at
$\pm1$ for every $\theta$, so $L_{\rm BC} \equiv 0$: the term and its weight $\beta$ disappear, and the loss is the
PDE (or
energy) term alone. In general $u_\theta = G(x) + D(x)N_\theta(x)$ with $G$ any extension of the boundary data and $D$ a
(smooth) distance-like function vanishing on $\partial\Omega$. The price: $D$ must be constructed for the domain (easy
for boxes and balls, harder for complex geometry), and it changes the derivatives the residual needs.
""",
    code="""\
for beta in (10.0, 1000.0, 1e5):                      # about 15-45 s each
    res = pde_experiments.run_poisson("ritz", steps=1500, lr=3e-3, **(poisson_cfg | {"beta": beta}))
    err = np.abs(res.solution - res.exact)
    print(f"beta = {beta:g}: max error {err.max():.4f} at x = {res.x[err.argmax(), 0]:+.2f}; "
          f"error at the ends {err[0]:.4f}, {err[-1]:.4f}")

# a hard constraint: u = (1 - x^2) N(x) is zero at both ends whatever N is
import torch
N = pde_experiments.tanh_net(1, 40, 3)
u_hard = lambda x: (1 - x ** 2) * N(x)
print(u_hard(torch.tensor([[-1.0], [1.0]])).detach().ravel())""",
)

S6 = Solution(
    label="习题6",
    text=r"""
**Why the weak form (弱形式).** WAN tests the equation against functions $\varphi$ vanishing on $\partial\Omega$ and
integrates
by parts once: $\int u'\varphi' = \int f\varphi$ (15.14). Only first derivatives of $u_\theta$ appear, and the identity
makes sense for $u \in H^1$ — continuous with a piecewise-continuous derivative. The strong form of a PINN (15.4)
needs $u''$ at every collocation point.

With $f = |x|$ the solution $u = (1 - |x|^3)/6$ is still $C^2$ ($u'' = -|x|$ is continuous; only $u'''$ jumps), so a
PINN
is not hurt by the kink in $f$: its residual is well defined and smooth enough. The weak form pays off when the
*solution* loses regularity: a jump in $f$ (then $u''$ jumps and a PINN's residual fights a discontinuity at the
collocation points near it), or a point source $f = 2\delta_0$ with the solution $u = 1 - |x|$, whose $u''$ does not
exist at 0 — the PINN residual is meaningless there, while the weak form reads $\int u'\varphi' = 2\varphi(0)$,
perfectly
well defined. Deep Ritz shares this advantage (first derivatives only).

The price of WAN is the min-max game: it needs the normalisation of the notebook's section 3 (the book's loss is
unbounded in $\varphi$) and it trains far less reliably than a PINN at CPU scale. Measured on $-u'' = |x|$ (seed 0, the
snippet below): the PINN of section 2's size (800 Adam steps) reaches a max error of 0.056 (of $\max|u| = 0.167$;
the same PINN reaches 0.005 on section 2's smooth problem, so the kink does cost it something), the normalised WAN
(width 20, 300 or 1500 alternating steps) 0.086 — no better, and not improving with more steps. The weak form's
advantage is one of *definition* (it makes sense where the strong form does not); turning it into accuracy needs the
careful adversarial training of Zang et al., beyond this notebook.
""",
    code="""\
import torch
from companion.core import pde
from companion.kit.seeds import generator

kink = pde.Problem(operator=pde.NEG_LAPLACIAN, source=lambda x: x[:, 0].abs(), domain=((-1.0, 1.0),),
                   boundary=lambda x: torch.zeros(x.shape[0], dtype=x.dtype),
                   exact=lambda x: (1 - x[:, 0].abs() ** 3) / 6, name="-u'' = |x|")
points, x_eval = pde.grid_points(kink, 128), torch.linspace(-1, 1, 401)[:, None]

gen = generator(seed)
u = pde_experiments.tanh_net(1, 40, 3, generator=gen)
def pinn_terms():
    terms = pde.pinn_loss(u, kink, points)
    terms["total"] = terms["pde"] + 1000.0 * terms["bc"]
    return terms
pde.fit(u, pinn_terms, steps=800, lr=5e-3, final_lr=5e-4)
print("PINN max error:", pde_experiments.max_error(u, kink, x_eval))

gen = generator(seed)
u, phi = pde_experiments.tanh_net(1, 20, 2, generator=gen), pde_experiments.tanh_net(1, 20, 2, generator=gen)
pde.fit_wan(u, phi, kink, points, steps=1500, lr_u=3e-3, lr_phi=1e-2, normalise=True)
print("WAN max error:", pde_experiments.max_error(u, kink, x_eval))""",
)

OPEN = Solution(
    label="Open questions",
    covers=(1, 8, 9, 17),
    text=r"""
**习题1, 17 — networks or classical solvers?** They are complementary, and this chapter shows why in one picture:
gradient-trained networks remove the *low*-frequency error first (frequency principle), Jacobi-type iterations the
high-frequency error first (习题3). The notebook's hybrid (section 5) uses both: after the network (max error 0.038)
and 2000 Jacobi sweeps the max error is 0.013, while Jacobi from zero is at 0.53 after the same 2000 sweeps and still
at 0.33 after 20 000. Classical solvers win where the geometry is simple, the dimension is low and high
accuracy is required (finite differences/elements with multigrid reach machine precision with error estimates);
networks help in high dimensions (no grid, the curse of dimensionality is milder for Monte-Carlo-sampled losses),
with complex or parametrised geometries, inverse problems and data assimilation ($L_{\rm data}$ in (15.4)), and as fast
surrogates once trained. Replacement is unlikely; combination (network initial guess, classical refinement; or
classical solvers generating training data) is the realistic route.

**习题8 — can PINNs solve every PDE?** No. Difficulties: high-frequency or multiscale solutions (the frequency
principle makes them slow: chapter 5's multiscale networks are one remedy), shocks and discontinuities (strong-form
residuals are ill-defined; weak forms, 习题6, help), stiff or chaotic time evolution, and the optimisation itself —
the loss terms compete (习题4) and the final accuracy is typically $10^{-3}$–$10^{-4}$ in relative terms, far from a
classical solver.

**习题9 — solving a whole family: operator learning.** A PINN parametrises one *solution* $u_\theta(x)$ and must be
retrained for each new source, coefficient or boundary condition. A neural operator (DeepONet, the Fourier neural
operator, §15.3) parametrises the *solution map* $G_\theta: f \mapsto u$ and, once trained on many (input, solution)
pairs, evaluates a new member of the family in one forward pass. The cost moves from solving to generating training
data (the book's 习题11) — worth it when the family is solved many times (design loops, uncertainty quantification).
Not reproduced in the companion.
""",
)

#: The solutions of chapter 15, in the order of the notebook.
SOLUTIONS: dict[str, Solution] = collect(S2, S3, S4, S6, OPEN)


def solution(label: str | int) -> Any:
    """Show the worked solution of a chapter-15 exercise and return its answer (``solution(2)`` → the 5 × 5 matrix A,
    ``solution(3)`` → the function (j, n) ↦ cos(jπ/n)).  ``label`` is a label of :data:`SOLUTIONS` or a number
    (4 and 5 → "习题4 / 5"; 1, 8, 9, 17 → the open questions).  Raises ``ValueError`` for an unknown label.
    """
    return show(SOLUTIONS, label, "chapter 15")
