"""Unit tests of companion.core.attention on hand-built attention maps, weights and a tiny model."""

import numpy as np
import pytest
import torch

from companion.core import anchor_tasks, attention
from companion.core.transformer import Transformer, TransformerConfig


def shift_then_broadcast_maps(key_pos, T=9):
    """Layer-1 map: every position attends to its predecessor; layer-2: the last row attends to the key."""
    N = len(key_pos)
    shift = np.zeros((N, 1, T, T))
    shift[:, 0, 0, 0] = 1.0
    shift[:, 0, np.arange(1, T), np.arange(T - 1)] = 1.0
    bcast = np.tile(np.eye(T), (N, 1, 1, 1))
    bcast[np.arange(N), 0, T - 1] = 0.0
    bcast[np.arange(N), 0, T - 1, key_pos] = 1.0
    return shift, bcast


def test_scores_on_ideal_and_uniform_maps():
    key_pos = np.array([2, 4, 5, 7])
    shift, bcast = shift_then_broadcast_maps(key_pos)
    assert attention.shift_score(shift, key_pos) == pytest.approx(1.0)
    assert attention.previous_token_score(shift) == pytest.approx(1.0)
    assert attention.broadcast_score(bcast, key_pos) == pytest.approx(1.0)
    assert attention.broadcast_score(shift, key_pos) == pytest.approx(0.25)  # only the key at 7 precedes the last
    uniform = np.tril(np.ones((9, 9)))
    uniform = np.tile(uniform / uniform.sum(1, keepdims=True), (4, 1, 1, 1))
    assert attention.shift_contrast(uniform, key_pos) == pytest.approx(1.0)
    mix = 0.5 * shift + 0.5 * uniform
    assert attention.shift_contrast(mix, key_pos) > 3.0
    assert attention.anchor_is_top(shift, key_pos) == pytest.approx(1.0)
    assert attention.anchor_is_top(uniform, key_pos) == pytest.approx(0.0)  # ties go to position 0
    assert attention.anchor_top_ratio(shift, key_pos) > 1e6  # only the anchor is attended
    assert attention.anchor_top_ratio(uniform, key_pos) == pytest.approx(1.0)  # a tie: not above 1
    assert attention.anchor_top_ratio(mix, key_pos) == pytest.approx(4.0)  # worst at key 2: (1/2 + 1/6) / (1/6)
    ens = np.stack([shift, uniform])  # with a member axis
    assert np.allclose(attention.shift_score(ens, key_pos), [1.0, attention.shift_score(uniform, key_pos)])


def test_scores_reject_bad_positions():
    shift, _ = shift_then_broadcast_maps(np.array([2, 3]))
    with pytest.raises(ValueError, match="positions"):
        attention.shift_score(shift, np.array([0, 3]))  # the anchor would sit at −1
    with pytest.raises(ValueError, match="shape"):
        attention.broadcast_score(shift[0, 0], np.array([2]))


def test_grouped_share_counts_neurons_with_an_aligned_partner():
    rng = np.random.default_rng(0)
    base = rng.normal(size=(64, 3))  # three directions in 64 dimensions, nearly orthogonal to each other
    w = np.concatenate([base[:, [0, 0, 0]], base[:, [1, 1]], base[:, [2]]], axis=1)  # groups of 3, 2 and a loner
    w = w + 0.05 * rng.normal(size=w.shape)
    assert attention.grouped_share(w) == pytest.approx(5 / 6)
    assert attention.grouped_share(-w[:, [0, 3]]) == 0.0  # neurons 0 and 3: different directions, no group
    assert attention.grouped_share(np.concatenate([w[:, :1], -w[:, :1]], axis=1)) == 0.0  # opposite: cos = −1
    assert attention.grouped_share(rng.normal(size=(32, 32))) == 0.0  # independent random directions


def test_condensation_of_aligned_and_random_neurons():
    rng = np.random.default_rng(0)
    direction = rng.normal(size=(16, 1))
    aligned = direction @ rng.choice([-1.0, 1.0], size=(1, 8)) * rng.uniform(0.5, 2, size=(1, 8))
    assert attention.condensation(aligned) == pytest.approx(1.0)
    assert attention.condensation(rng.normal(size=(400, 8))) < 0.1
    c = attention.neuron_cosine(aligned)
    assert c.shape == (8, 8) and np.allclose(np.diag(c), 1.0)
    grouped = attention.sorted_neuron_cosine(aligned)
    assert grouped.shape == (8, 8) and np.allclose(np.sort(grouped.ravel()), np.sort(c.ravel()))
    with pytest.raises(ValueError, match="matrix"):
        attention.neuron_cosine(np.ones(3))


def test_pca_of_a_line_and_of_noise():
    t = np.linspace(0, 1, 80)[:, None]
    line = t @ np.ones((1, 10)) + 1e-6 * np.random.default_rng(0).normal(size=(80, 10))
    xy, ratio = attention.pca(line, 2)
    assert xy.shape == (80, 2) and ratio[0] > 0.999
    assert attention.explained_variance(np.random.default_rng(1).normal(size=(80, 40))) < 0.2
    with pytest.raises(ValueError, match="k"):
        attention.pca(line, 20)


def test_masking_commutativity_and_maps_on_a_model():
    data = anchor_tasks.composite_task(20, 20, 30, seed=0).tests["OOD"]
    cfg = TransformerConfig(vocab_size=100, max_len=6, d_model=16, d_ff=32)
    model = Transformer(cfg, n_members=2, generator=torch.Generator().manual_seed(0))
    keep = attention.position_keep_mask(data, (0,))
    assert keep.shape == (30, 1, 1, 6) and float(keep.sum()) == 30 * 5
    plain = attention.masked_last_outputs(model, data, None)
    masked = attention.masked_last_outputs(model, data, (0,))
    assert plain.shape == (2, 30, 100) and not np.allclose(plain, masked)
    comm = attention.commutativity(model, data)
    with torch.no_grad():  # by hand: argmax of the last position, before and after swapping the anchors
        before = model(data.x)[:, :, -1].argmax(-1)
        after = model(anchor_tasks.swap_anchors(data).x)[:, :, -1].argmax(-1)
    assert comm.shape == (2,) and np.allclose(comm, (before == after).float().mean(1).numpy())
    assert not np.allclose(comm, 1.0)  # a random model reads the order of the anchors
    maps = attention.attention_maps(model, data.x)
    assert len(maps) == 2 and maps[0].shape == (2, 30, 1, 6, 6)
    with pytest.raises(ValueError, match="offset"):
        attention.position_keep_mask(data, (5,))


def test_commutativity_is_one_for_a_model_blind_to_anchor_order():
    data = anchor_tasks.composite_task(20, 20, 60, seed=0).tests["OOD"]
    data = data.subset(data.key_pos < 3)  # the last token is noise, not one of the swapped anchors
    cfg = TransformerConfig(vocab_size=100, max_len=6, d_model=8, d_ff=0, causal=False)
    model = Transformer(cfg, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():  # no positions and a bag-of-tokens model: swapping two tokens changes nothing
        model.x_pos.zero_()
    assert attention.commutativity(model, data) == pytest.approx(1.0)
