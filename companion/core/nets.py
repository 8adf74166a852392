"""Fully connected networks with an explicit initialisation scale, as used throughout the book.

* :func:`activation` builds the activations the book uses: ``tanh``, ``relu``, ``sigmoid``,
  ``softplus``, the Ricker wavelet (4.3) ``ricker`` with width ``a``, ``sin`` (σ(x) = sin(a x),
  图4.10), ``srelu`` (σ(x) = ReLU(x)·ReLU(1−x), the compactly supported activation of the
  multiscale DNN, §5.2) and ``xtanh``/``x2tanh`` (activations of multiplicity 2 and 3, §8.3).
* :class:`MLP` is a plain network whose every weight and bias is drawn from N(0, std²), with one
  std per layer (the book's "init scale").
* :class:`ASI` is the antisymmetric initialisation trick of §4.2.1 (Zhang et al. 2020): two
  sub-networks with identical initial parameters, output h(x) = h₁(x) − h₂(x) ≡ 0 at t = 0.
* :class:`BatchedMLP` holds K independent MLPs of one architecture as a single set of tensors
  with a leading ensemble dimension, so that a grid of runs trains as one computation.
* :class:`MscaleDNN` is the multiscale DNN (5.2), :class:`SD2DNN` the subspace-decomposition network of
  §5.1.2 (a sum of MscaleDNN sub-modules) and :class:`FourierFeatureNet` the Fourier-feature network (5.11)
  of chapter 5, used by chapters 5 and 15.

Every random draw of an initialisation comes from the ``generator`` the caller passes
(:func:`companion.kit.seeds.generator`); no constructor touches torch's global random state.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import Tensor, nn

Activation = Callable[[Tensor], Tensor]


def ricker(x: Tensor, a: float | Tensor = 0.3) -> Tensor:
    """Ricker ("Mexican hat") activation of width ``a``, book eq. (4.3).

    σ(x) = (1 / (15 a)) π^{1/4} (1 − (x/a)²) exp(−(x/a)² / 2).  Larger ``a`` concentrates the
    activation's spectrum at lower frequency, i.e. a stronger low-frequency preference.
    """
    z = x / a
    return (math.pi ** 0.25 / (15.0 * a)) * (1.0 - z * z) * torch.exp(-0.5 * z * z)


def srelu(x: Tensor) -> Tensor:
    """sReLU(x) = ReLU(x)·ReLU(1 − x), compactly supported on [0, 1] (MscaleDNN, §5.2)."""
    return torch.relu(x) * torch.relu(1.0 - x)


_SIMPLE: dict[str, Activation] = {
    "tanh": torch.tanh,
    "relu": torch.relu,
    "sigmoid": torch.sigmoid,
    "softplus": nn.functional.softplus,
    "srelu": srelu,
    "xtanh": lambda x: x * torch.tanh(x),
    "x2tanh": lambda x: x * x * torch.tanh(x),
}
_PARAMETRISED = ("ricker", "sin")
ACTIVATIONS = tuple(sorted((*_SIMPLE, *_PARAMETRISED)))


def _beside(a: float | Tensor, x: Tensor) -> float | Tensor:
    """``a`` on the device of ``x`` (a network trained on a GPU keeps its per-member ``a`` drawn on the CPU)."""
    return a.to(x.device) if isinstance(a, Tensor) else a


def activation(name: str, a: float | Tensor = 1.0) -> Activation:
    """Return the activation called ``name``; ``a`` is the width of ``ricker`` or the rate of ``sin``.

    ``a`` may be a tensor that broadcasts against the pre-activations, e.g. of shape (K, 1, 1) to
    give each member of a :class:`BatchedMLP` its own value.
    """
    if name in _SIMPLE:
        return _SIMPLE[name]
    if isinstance(a, (int, float)) and not a > 0:
        raise ValueError(f"activation parameter a must be positive, got {a}")
    if name == "ricker":
        return lambda x: ricker(x, _beside(a, x))
    if name == "sin":
        return lambda x: torch.sin(_beside(a, x) * x)
    raise ValueError(f"unknown activation {name!r}; choose one of {', '.join(ACTIVATIONS)}")


def _layer_stds(init_std: float | Sequence[float], n_layers: int) -> list[float]:
    stds = [float(init_std)] * n_layers if isinstance(init_std, (int, float)) else [float(s) for s in init_std]
    if len(stds) != n_layers:
        raise ValueError(f"init_std has {len(stds)} entries but the network has {n_layers} layers")
    if any(not s >= 0 for s in stds):
        raise ValueError(f"init_std must be non-negative, got {stds}")
    return stds


def _check_widths(widths: Sequence[int]) -> list[int]:
    widths = [int(w) for w in widths]
    if len(widths) < 2 or any(w < 1 for w in widths):
        raise ValueError(f"widths must list at least an input and an output size, all ≥ 1; got {widths}")
    return widths


class MLP(nn.Module):
    """x ↦ W_L σ(… σ(W_1 x + b_1) …) + b_L with every parameter ~ N(0, std_l²) at initialisation.

    Args:
        widths: layer sizes ``[d_in, m_1, …, d_out]``.
        act: an activation name (see :data:`ACTIVATIONS`) or a callable.
        init_std: one std for all layers, or one per layer (weights and biases of layer l share it).
        a: parameter of ``ricker``/``sin`` activations.
        generator: torch generator for reproducible initialisation.
    """

    def __init__(self, widths: Sequence[int], act: str | Activation = "tanh",
                 init_std: float | Sequence[float] = 0.1, a: float = 1.0,
                 generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.widths = _check_widths(widths)
        self.act = activation(act, a) if isinstance(act, str) else act
        self.layers = nn.ModuleList(nn.utils.skip_init(nn.Linear, i, o)
                                    for i, o in zip(self.widths[:-1], self.widths[1:]))
        with torch.no_grad():
            for layer, std in zip(self.layers, _layer_stds(init_std, len(self.layers))):
                layer.weight.copy_(torch.randn(layer.weight.shape, generator=generator) * std)
                layer.bias.copy_(torch.randn(layer.bias.shape, generator=generator) * std)

    def features(self, x: Tensor) -> Tensor:
        """Output of the last hidden layer, shape (N, m_{L-1})."""
        for layer in self.layers[:-1]:
            x = self.act(layer(x))
        return x

    def forward(self, x: Tensor) -> Tensor:  # (N, d_in) -> (N, d_out)
        return self.layers[-1](self.features(x))

    def record_base(self) -> dict:
        """What :meth:`to_record` stores: widths, the activation's name, the weights and the mode."""
        names = [name for name, fn in _SIMPLE.items() if fn is self.act]
        if not names:
            raise TypeError(f"{type(self).__name__} with activation {self.act!r} cannot be stored as data: "
                            f"only the named activations {', '.join(_SIMPLE)} can")
        return {"widths": list(self.widths), "act": names[0], "state": dict(self.state_dict()),
                "training": self.training}

    def load_record(self, record: dict) -> MLP:
        """Load the weights and the mode of :meth:`record_base`'s record (bit for bit)."""
        self.load_state_dict(record["state"])
        return self.train(record["training"])

    def to_record(self) -> dict:
        """This net as data for the results cache (:mod:`companion.kit.cache`); :meth:`from_record` rebuilds it."""
        return self.record_base()

    @classmethod
    def from_record(cls, record: dict) -> MLP:
        return cls(record["widths"], record["act"], init_std=0.0, generator=torch.Generator()).load_record(record)


class ASI(nn.Module):
    """Antisymmetric initialisation: h(x) = h₁(x) − h₂(x) with h₂ an exact copy of h₁ at t = 0.

    The book (§4.2.1) describes the plain difference of two identically initialised
    sub-networks; the output is therefore exactly zero at initialisation whatever the activation,
    which removes the initial function's own frequency content from the comparison.
    """

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net1 = net
        self.net2 = copy.deepcopy(net)

    def forward(self, x: Tensor) -> Tensor:
        return self.net1(x) - self.net2(x)


class BatchedMLP(nn.Module):
    """K independent MLPs of one architecture trained as one batched computation.

    Parameters carry a leading ensemble dimension: ``weights[l]`` has shape (K, m_l, m_{l+1}) and
    ``biases[l]`` shape (K, 1, m_{l+1}).  Member k is initialised with std ``init_std[k]`` (a
    scalar, one value per member, or a (K, L) table with one value per member and layer).  With
    ``asi=True`` every member is an :class:`ASI` pair, so all outputs are exactly zero at t = 0.

    Because members share no parameter, the gradient of the *sum* of the members' losses with
    respect to member k's parameters is member k's own gradient, so one optimiser over the
    stacked tensors trains all K nets independently (Adam and SGD act element-wise).
    """

    def __init__(self, widths: Sequence[int], n_members: int, act: str | Activation = "tanh",
                 init_std: float | Sequence[float] | Tensor = 0.1, a: float | Tensor = 1.0,
                 asi: bool = False, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.widths = _check_widths(widths)
        if n_members < 1:
            raise ValueError(f"n_members must be ≥ 1, got {n_members}")
        self.n_members, self.asi = int(n_members), bool(asi)
        n_layers = len(self.widths) - 1
        std = torch.as_tensor(init_std, dtype=torch.float32)
        if std.ndim == 0:
            std = std.expand(n_members, n_layers)
        elif std.ndim == 1 and std.shape[0] == n_members:
            std = std[:, None].expand(n_members, n_layers)
        elif std.shape != (n_members, n_layers):
            raise ValueError(f"init_std must be a scalar, shape ({n_members},) or ({n_members}, {n_layers}); "
                             f"got shape {tuple(std.shape)}")
        if (std < 0).any():
            raise ValueError("init_std must be non-negative")
        if isinstance(a, Tensor) and a.ndim == 1:
            a = a.reshape(-1, 1, 1)
        self.act = activation(act, a) if isinstance(act, str) else act
        self.weights, self.biases = nn.ParameterList(), nn.ParameterList()
        for l, (i, o) in enumerate(zip(self.widths[:-1], self.widths[1:])):
            s = std[:, l].reshape(-1, 1, 1)
            self.weights.append(nn.Parameter(torch.randn(n_members, i, o, generator=generator) * s))
            self.biases.append(nn.Parameter(torch.randn(n_members, 1, o, generator=generator) * s))
        if self.asi:
            self.twin_weights = nn.ParameterList(nn.Parameter(w.detach().clone()) for w in self.weights)
            self.twin_biases = nn.ParameterList(nn.Parameter(b.detach().clone()) for b in self.biases)

    def _one(self, x: Tensor, weights: Sequence[Tensor], biases: Sequence[Tensor]) -> Tensor:
        for w, b in zip(weights[:-1], biases[:-1]):
            x = self.act(torch.baddbmm(b, x, w))  # (K, N, m_l)
        return torch.baddbmm(biases[-1], x, weights[-1])

    def forward(self, x: Tensor) -> Tensor:
        """x: (N, d_in) shared by all members or (K, N, d_in); returns (K, N, d_out)."""
        if x.ndim == 2:
            x = x.expand(self.n_members, *x.shape)
        if x.shape[0] != self.n_members or x.shape[-1] != self.widths[0]:
            raise ValueError(f"input must have shape (N, {self.widths[0]}) or ({self.n_members}, N, "
                             f"{self.widths[0]}); got {tuple(x.shape)}")
        out = self._one(x, self.weights, self.biases)
        if self.asi:
            out = out - self._one(x, self.twin_weights, self.twin_biases)
        return out


def linear(d_in: int, d_out: int, generator: torch.Generator) -> nn.Linear:
    """An ``nn.Linear`` with torch's default initialisation, U(−1/√d_in, 1/√d_in) for weights and biases
    (Kaiming-uniform with a = √5), drawn from ``generator`` instead of the global random state."""
    layer = nn.utils.skip_init(nn.Linear, d_in, d_out)
    with torch.no_grad():
        nn.init.kaiming_uniform_(layer.weight, a=math.sqrt(5), generator=generator)
        bound = 1.0 / math.sqrt(d_in)
        nn.init.uniform_(layer.bias, -bound, bound, generator=generator)
    return layer


class MscaleDNN(nn.Module):
    """Multiscale DNN (5.2): the first hidden layer is split into parts, part i sees the input × scale_i.

    Stretching the input by a maps frequency ξ of the target to ξ/a for that part (5.1), so high
    frequencies become low ones that the network learns fast.  Use a compactly supported
    activation such as sReLU (or sin): ReLU is positively homogeneous, so scaling its input only
    rescales its output and the trick does nothing.

    Layers get torch's default initialisation (:func:`linear`) drawn from ``generator``, then, with
    ``init_std``, every parameter is redrawn from N(0, init_std²).
    """

    def __init__(self, d_in: int, width: int, depth: int, scales: Sequence[float], act: str = "srelu",
                 init_std: float | None = None, *, generator: torch.Generator) -> None:
        super().__init__()
        if width < len(scales) or not scales:
            raise ValueError(f"width {width} must be at least the number of scales {len(scales)} (≥ 1)")
        parts = np.array_split(np.arange(width), len(scales))
        self.register_buffer("scale", torch.cat([torch.full((len(p),), float(s)) for s, p in zip(scales, parts)]))
        self.act = activation(act)
        self.first = linear(d_in, width, generator)
        self.hidden = nn.ModuleList(linear(width, width, generator) for _ in range(depth - 1))
        self.out = linear(width, 1, generator)
        if init_std is not None:
            with torch.no_grad():
                for p in self.parameters():
                    nn.init.normal_(p, std=init_std, generator=generator)

    def forward(self, x: Tensor) -> Tensor:  # (N, d_in) -> (N, 1)
        h = self.act(self.first(x) * self.scale)          # σ(K ⊙ (W x + b)): each neuron's own scale
        for layer in self.hidden:
            h = self.act(layer(h))
        return self.out(h)


class SD2DNN(nn.Module):
    """Subspace-decomposition DNN (SD²DNN, §5.1.2, Li et al. 2023): u(x) = Σ_i u_i(x), one
    :class:`MscaleDNN` sub-module per group of scales — a low-frequency module (scale 1 only) and one or
    more high-frequency modules with larger scales — so that each sub-module can take the part of the
    solution at its own scale.  :meth:`parts` returns the sub-modules' outputs; an orthogonality penalty
    between them (the book's L_orth, (5.10)) is the caller's loss term.

    The sub-modules are drawn one after the other from ``generator``.
    """

    def __init__(self, d_in: int, width: int, depth: int, scale_groups: Sequence[Sequence[float]],
                 act: str = "sin", *, generator: torch.Generator) -> None:
        super().__init__()
        if not scale_groups:
            raise ValueError("SD²DNN needs at least one group of scales")
        self.subnets = nn.ModuleList(MscaleDNN(d_in, width, depth, scales=list(group), act=act, generator=generator)
                                     for group in scale_groups)

    def parts(self, x: Tensor) -> Tensor:  # (N, d_in) -> (P, N, 1), one output per sub-module
        return torch.stack([net(x) for net in self.subnets])

    def forward(self, x: Tensor) -> Tensor:  # (N, d_in) -> (N, 1)
        return self.parts(x).sum(0)


class FourierFeatureNet(nn.Module):
    """γ(v) = [cos(2π Bv), sin(2π Bv)] with B ~ N(0, σ²) fixed (5.11), followed by a tanh MLP.

    B and then the MLP's layers (:func:`linear`) are drawn from ``generator``.
    """

    def __init__(self, d_in: int, n_features: int, sigma: float, width: int, depth: int, *,
                 generator: torch.Generator) -> None:
        super().__init__()
        self.register_buffer("B", torch.randn(n_features, d_in, generator=generator) * sigma)
        layers: list[nn.Module] = []
        sizes = [2 * n_features] + [width] * depth
        for i, o in zip(sizes[:-1], sizes[1:]):
            layers += [linear(i, o, generator), nn.Tanh()]
        self.mlp = nn.Sequential(*layers, linear(width, 1, generator))

    def forward(self, x: Tensor) -> Tensor:
        z = 2 * math.pi * x @ self.B.T                     # (N, n_features)
        return self.mlp(torch.cat([torch.cos(z), torch.sin(z)], dim=-1))


class BatchedConvNet(nn.Module):
    """K one-convolution-layer networks trained as one batched computation (图8.5).

    Member k: C kernels of size k×k (stride 1, no padding) over a square grey image, the activation,
    then a fully connected layer from the flattened (positions × channels) features to the logits:

        h_{n,p,c} = σ(u_c · patch_p(x_n) + b_c),     logits_n = Σ_{p,c} h_{n,p,c} V_{p,c,:} + v.

    Every parameter of member k is drawn from N(0, std_k²): ``conv_std`` for (u, b), ``fc_std`` for
    (V, v), scalars or one value per member, so one ensemble can hold a small and a large
    initialisation side by side.  Shapes: ``kernels`` (K, C, k²), ``conv_bias`` (K, C), ``fc`` (K, P·C, O),
    ``fc_bias`` (K, O) with P = (size − k + 1)² positions.
    """

    def __init__(self, image_size: int, channels: int, n_classes: int, n_members: int, *, kernel: int = 3,
                 act: str = "tanh", conv_std: float | Sequence[float] | Tensor = 0.1,
                 fc_std: float | Sequence[float] | Tensor = 0.1, generator: torch.Generator | None = None,
                 dtype: torch.dtype = torch.float32) -> None:
        super().__init__()
        if not 1 <= kernel <= image_size or channels < 1 or n_classes < 2 or n_members < 1:
            raise ValueError(f"need 1 ≤ kernel ≤ image_size, channels ≥ 1, n_classes ≥ 2, n_members ≥ 1; got "
                             f"kernel={kernel}, image_size={image_size}, channels={channels}, "
                             f"n_classes={n_classes}, n_members={n_members}")
        self.image_size, self.kernel, self.channels = int(image_size), int(kernel), int(channels)
        self.n_members, self.n_classes = int(n_members), int(n_classes)
        self.positions = (image_size - kernel + 1) ** 2
        self.act = activation(act)

        def stds(value: float | Sequence[float] | Tensor, name: str) -> Tensor:
            s = torch.as_tensor(value, dtype=dtype)
            s = s.expand(n_members) if s.ndim == 0 else s
            if s.shape != (n_members,) or bool((s < 0).any()):
                raise ValueError(f"{name} must be a non-negative scalar or {n_members} values; got {value}")
            return s

        cs, fs = stds(conv_std, "conv_std"), stds(fc_std, "fc_std")
        k, c, p, o = n_members, channels, self.positions, n_classes
        draw = lambda *shape: torch.randn(*shape, generator=generator, dtype=dtype)  # noqa: E731
        self.kernels = nn.Parameter(draw(k, c, kernel * kernel) * cs[:, None, None])  # (K, C, k²)
        self.conv_bias = nn.Parameter(draw(k, c) * cs[:, None])  # (K, C)
        self.fc = nn.Parameter(draw(k, p * c, o) * fs[:, None, None])  # (K, P·C, O)
        self.fc_bias = nn.Parameter(draw(k, o) * fs[:, None])  # (K, O)

    def patches(self, images: Tensor) -> Tensor:
        """Images (N, size, size) → their k×k patches (N, P, k²), row-major positions."""
        if images.ndim != 3 or images.shape[1:] != (self.image_size, self.image_size):
            raise ValueError(f"images must have shape (N, {self.image_size}, {self.image_size}); "
                             f"got {tuple(images.shape)}")
        cols = nn.functional.unfold(images[:, None].to(self.kernels.dtype), self.kernel)  # (N, k², P)
        return cols.transpose(1, 2)

    def features(self, images: Tensor, kernels: Tensor | None = None, bias: Tensor | None = None) -> Tensor:
        """The convolution layer's outputs σ(u_c·patch_p + b_c), (K, N, P, C); other (kernels, bias) may be given."""
        kernels = self.kernels if kernels is None else kernels
        bias = self.conv_bias if bias is None else bias
        pre = torch.einsum("npj,kcj->knpc", self.patches(images), kernels)  # (K, N, P, C)
        return self.act(pre + bias[:, None, None, :])

    def forward(self, images: Tensor) -> Tensor:
        """Images (N, size, size) → logits (K, N, O)."""
        h = self.features(images).flatten(2)  # (K, N, P·C)
        return torch.baddbmm(self.fc_bias[:, None, :], h, self.fc)


class MemberASI(nn.Module):
    """A :class:`BatchedMLP` whose members are ASI pairs or plain nets, one choice per member (图4.9, 图4.10).

    Output of member k: h_k(x) − mask_k · h′_k(x), with h′ an exact copy of the ensemble at t = 0 and
    mask_k ∈ {0, 1}; so ASI members start from the zero function and the others from their random one,
    inside one batched computation.  (A masked-out twin gets zero gradient and never moves.)
    """

    def __init__(self, net: BatchedMLP, asi: Sequence[bool]) -> None:
        super().__init__()
        if len(asi) != net.n_members or net.asi:
            raise ValueError(f"give one ASI flag per member ({net.n_members}) of a BatchedMLP built with asi=False; "
                             f"got {len(asi)} flags")
        self.net, self.twin = net, copy.deepcopy(net)
        self.n_members, self.widths = net.n_members, net.widths
        self.register_buffer("mask", torch.tensor([float(bool(f)) for f in asi]).reshape(-1, 1, 1))

    def forward(self, x: Tensor) -> Tensor:
        """x: (N, d_in) or (K, N, d_in); returns (K, N, d_out)."""
        return self.net(x) - self.mask * self.twin(x)
