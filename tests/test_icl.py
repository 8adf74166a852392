"""Unit tests of companion.core.icl (ΔW theorem, implicit GD, transformer adapter), of the core mechanisms of chapter
14's other phenomena (modular, classify, pruning, random_features, connectivity) and of
companion.experiments.ch14_phenomena."""

import numpy as np
import pytest
import torch

from companion.core import classify, connectivity, icl, modular, pruning, random_features, train
from companion.core.nets import BatchedMLP
from companion.experiments import ch14_phenomena as icl_tasks
from companion.core.transformer import Transformer, TransformerConfig
from companion.kit.seeds import generator
from device_support import OneDevicePerCall, on_meta, steps_only

F64 = torch.float64


def random_prompts(n=6, t=9, dim=8, seed=0):
    return torch.randn(n, t, dim, dtype=F64, generator=generator(seed))


@pytest.mark.parametrize("kind", icl.KINDS)
def test_theorem_holds_exactly_with_rank_one_update(kind):
    gen = generator(1)
    block = icl.ContextualBlock(kind=kind, generator=gen)
    h = random_prompts()
    with torch.no_grad():
        update = icl.implicit_update(block, h, h[:, -1:])
        patched = icl.patched_output(block, h[:, -1:], update)
        target = icl.block_output(block, h)
        reduced = h[:, 4:]  # C∖Y with Y the first four context tokens
        partial = icl.implicit_update(block, h, reduced)
    assert (patched - target).abs().max() < 1e-12
    assert (icl.patched_output(block, reduced, partial) - target).abs().max() < 1e-12
    assert update.rank().tolist() == [1] * h.shape[0]
    # without the update the query-only output is different: the context matters
    assert (icl.patched_output(block, h[:, -1:]) - target).abs().max() > 1e-3
    if kind == "plain":
        assert torch.count_nonzero(update.db2) == 0
    else:
        assert update.db2.abs().max() > 1e-3


def test_delta_w_is_the_papers_formula_on_a_plain_block():
    block = icl.ContextualBlock(kind="plain", generator=generator(2))
    h = random_prompts(n=1)
    with torch.no_grad():
        a_c, a_x = block.mixer(h)[0, -1], block.mixer(h[:, -1:])[0, -1]
        update = icl.implicit_update(block, h, h[:, -1:])
    expected = torch.outer(block.fc1.weight @ (a_c - a_x), a_x) / (a_x @ a_x)
    assert torch.allclose(update.dW[0], expected, atol=1e-14)


@pytest.mark.parametrize("kind", icl.KINDS)
def test_implicit_gd_telescopes_to_delta_w_and_matches_every_prefix(kind):
    block = icl.ContextualBlock(kind=kind, generator=generator(3))
    h = random_prompts(t=7)
    with torch.no_grad():
        path = icl.implicit_gd(block, h)
        full = icl.implicit_update(block, h, h[:, -1:])
    assert path.dW.shape == (6, 7, 32, 8) and path.steps.shape == (6, 6, 32, 8)
    assert torch.count_nonzero(path.dW[:, 0]) == 0
    assert (path.patched - path.with_context).abs().max() < 1e-12
    assert (path.dW[:, -1] - full.dW).abs().max() < 1e-12
    for i in range(1, 7):
        assert icl.Update(path.dW[:, i], full.db2).rank().max() == 1
    assert path.increments().shape == (6, 6) and (path.increments() > 0).all()


def test_a_token_that_does_not_change_attention_gives_no_update():
    block = icl.ContextualBlock(kind="skip", generator=generator(4))
    h = random_prompts(n=2, t=3)
    h[:, 0] = h[:, 2]  # a context token identical to the query: softmax over equal scores leaves A unchanged
    with torch.no_grad():
        path = icl.implicit_gd(block, h[:, [0, 2]])
    assert path.increments().abs().max() < 1e-12


@pytest.mark.parametrize("kind", icl.KINDS)
def test_verify_and_patch_stack_on_two_blocks(kind):
    gen = generator(5)
    blocks = [icl.ContextualBlock(kind=kind, generator=gen) for _ in range(2)]
    v = icl.verify(blocks, random_prompts())
    assert v.worst() < 1e-12
    assert set(v.ranks.values()) == {1}
    assert "all blocks patched, query only" in v.errors and "block 1: ΔW(C)" in v.errors


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="kind"):
        icl.ContextualBlock(kind="post", generator=generator(0))
    with pytest.raises(ValueError, match="divisible"):
        icl.ContextualBlock(dim=7, heads=2, generator=generator(0))
    block = icl.ContextualBlock(generator=generator(0))
    with pytest.raises(ValueError, match="shape"):
        icl.implicit_update(block, torch.randn(2, 5, 3, dtype=F64), torch.randn(2, 1, 3, dtype=F64))
    with pytest.raises(ValueError, match="updates"):
        icl.patched_stack_output([block, block], random_prompts()[:, -1:], [])


@pytest.mark.parametrize("norm", ["none", "pre"])
def test_transformer_blocks_are_contextual_blocks(norm):
    cfg = TransformerConfig(vocab_size=None, d_input=5, max_len=9, d_model=16, n_layers=2, d_ff=32, d_out=1,
                            norm=norm, causal=False, activation="gelu")
    model = Transformer(cfg, generator=generator(0)).double()
    x = torch.randn(4, 9, 5, dtype=F64)
    blocks = icl.contextual_blocks(model)
    assert [b.kind for b in blocks] == ["preln" if norm == "pre" else "skip"] * 2
    with torch.no_grad():
        h = icl.embed(model, x)
        for b in blocks:
            h = b(h)
        assert torch.allclose(icl.readout(model, h), model(x), atol=1e-12)
        _, _, q = icl.patch_stack(blocks, icl.embed(model, x), icl.embed(model, x[:, -1:]))
        assert torch.allclose(icl.readout(model, q), model(x)[:, -1], atol=1e-12)
        v = icl.verify(blocks, icl.embed(model, x), icl.embed(model, x[:, -1:]))
    assert v.worst() < 1e-12


def test_post_ln_or_ensemble_models_are_refused():
    post = Transformer(TransformerConfig(vocab_size=None, d_input=3, d_out=1, d_model=8, d_ff=8, norm="post"),
                       generator=generator(0))
    with pytest.raises(ValueError, match="norm"):
        icl.contextual_blocks(post)
    ens = Transformer(TransformerConfig(vocab_size=None, d_input=3, d_out=1, d_model=8, d_ff=8, norm="none"),
                      n_members=2, generator=generator(0))
    with pytest.raises(ValueError, match="single-member"):
        icl.contextual_blocks(ens)


def test_exercise_checker(capsys):
    assert not icl_tasks.check_min_norm_update(lambda W, dA, a: torch.zeros_like(W))
    assert not icl_tasks.check_min_norm_update(  # exact but not minimal
        lambda W, dA, a: torch.outer(W @ dA, a) / (a @ a) + torch.outer(torch.ones(W.shape[0], dtype=F64),
                                                                        torch.linalg.svd(a[None])[2][1]))
    assert icl_tasks.check_min_norm_update(lambda W, dA, a: torch.outer(W @ dA, a) / (a @ a))
    assert "✔" in capsys.readouterr().out


# ------------------------------------------------------------------------------------------- tasks
def test_tasks_and_tokens():
    gen = generator(0)
    t = icl_tasks.sample_tasks(5, 3, 4, generator=gen)
    assert t.xs.shape == (5, 3, 4) and t.ys.shape == (5, 3) and t.xq.shape == (5, 4)
    assert torch.allclose(t.ys, torch.einsum("bkd,bd->bk", t.xs, t.w))
    tok = t.tokens()
    assert tok.shape == (5, 4, 5)
    assert torch.equal(tok[:, -1, :4], t.xq) and torch.count_nonzero(tok[:, -1, 4]) == 0
    assert torch.equal(tok[:, :3, 4], t.ys)
    assert t.tokens(k=1).shape == (5, 2, 5)
    with pytest.raises(ValueError, match="k must"):
        t.tokens(k=4)
    with pytest.raises(ValueError, match="noise"):
        icl_tasks.sample_tasks(2, 2, 2, noise=-1.0, generator=gen)



def test_tasks_with_given_weights_keep_the_draws():
    # a given w replaces the task vectors only: the inputs are the same draws, the labels follow the given w
    drawn = icl_tasks.sample_tasks(5, 3, 4, noise=0.1, generator=generator(0))
    w = torch.randn(5, 4, generator=generator(1))
    given = icl_tasks.sample_tasks(5, 3, 4, noise=0.1, generator=generator(0), w=w)
    assert torch.equal(given.xs, drawn.xs) and torch.equal(given.xq, drawn.xq) and torch.equal(given.w, w)
    assert torch.allclose(given.ys - drawn.ys, torch.einsum("bkd,bd->bk", drawn.xs, w - drawn.w), atol=1e-5)
    with pytest.raises(ValueError, match="w must"):
        icl_tasks.sample_tasks(5, 3, 4, generator=generator(0), w=w[:2])


def test_one_task_pool_trains_on_one_task():
    # n_pretrain_tasks = 1: every prompt asks the same w*; the network learns it without reading the context
    config = icl_tasks.ICLConfig(d=2, k_max=4, d_model=8, d_ff=16, n_layers=1, steps=150, batch=32, lr=1e-2, seed=0,
                                 n_pretrain_tasks=1)
    trained = icl_tasks.train_icl.__wrapped__(config)
    assert trained.history["train_loss"][-1] < 0.05 * trained.history["train_loss"][0]
    with pytest.raises(ValueError, match="n_pretrain_tasks"):
        icl_tasks.train_icl.__wrapped__(icl_tasks.ICLConfig(steps=1, n_pretrain_tasks=-1))

def test_baselines():
    gen = generator(1)
    t = icl_tasks.sample_tasks(64, 8, 4, generator=gen, dtype=F64)
    assert torch.allclose(icl_tasks.baseline_weights("ols", t), t.w, atol=1e-10)  # k ≥ d, noiseless: exact
    ridge = icl_tasks.baseline_weights("ridge", t, lam=1e-8)
    assert torch.allclose(ridge, t.w, atol=1e-6)
    short = icl_tasks.sample_tasks(64, 2, 4, generator=gen, dtype=F64)
    w_ols = icl_tasks.baseline_weights("ols", short)
    assert torch.allclose(torch.einsum("bkd,bd->bk", short.xs, w_ols), short.ys, atol=1e-10)  # interpolates
    eta = icl_tasks.fit_gd_eta(8, 4, generator=gen)
    assert 0 < eta < 1
    pred = {n: (icl_tasks.baseline_weights(n, t, eta=eta) * t.xq).sum(-1) for n in icl_tasks.BASELINES}
    mse = {n: float(((p - t.yq) ** 2).mean()) for n, p in pred.items()}
    assert mse["ols"] < mse["ridge"] < mse["gd1"] < mse["zero"]
    assert icl_tasks.spd(pred["zero"], pred["zero"]) == 0 and icl_tasks.spd(pred["ols"], t.yq) < 1e-12
    assert icl_tasks.ilwd(t.w, t.w) == 0 and icl_tasks.ilwd(torch.zeros_like(t.w), t.w) > 1
    with pytest.raises(ValueError, match="baseline"):
        icl_tasks.baseline_weights("lasso", t)
    with pytest.raises(ValueError, match="λ"):
        icl_tasks.ridge_weights(t.xs, t.ys, 0.0)


class OLSLearner:
    """A stand-in 'model' that reads the prompt and answers with the OLS prediction."""

    def __call__(self, tokens):
        xs, ys, xq = tokens[:, :-1, :-1], tokens[:, :-1, -1], tokens[:, -1, :-1]
        w = icl_tasks.ols_weights(xs, ys)
        return (w * xq).sum(-1)[:, None, None].expand(-1, tokens.shape[1], 1)


def test_learner_weights_recover_a_linear_learner():
    gen = generator(2)
    t = icl_tasks.sample_tasks(16, 6, 4, generator=gen)
    probes = torch.randn(16, 8, 4, generator=gen)
    w = icl_tasks.learner_weights(OLSLearner(), t, probes)
    assert icl_tasks.ilwd(w, icl_tasks.ols_weights(t.xs, t.ys)) < 1e-8


@pytest.mark.parametrize("seed", [1, 2])
def test_a_short_training_learns_in_context(seed):
    # a small learner on d = 2 learns to predict from the prompt: its loss falls, and with 6 examples it is
    # far better than the zero predictor and than itself with one example; the untrained network is not
    config = icl_tasks.ICLConfig(d=2, k_max=6, d_model=16, d_ff=32, steps=300, batch=64, seed=seed)
    trained = icl_tasks.train_icl.__wrapped__(config, record_every=50)
    assert trained.history.steps.tolist() == [50, 100, 150, 200, 250, 300]
    assert trained.history.train_loss[-1] < 0.7 * trained.history.train_loss[0]
    comp = icl_tasks.compare(trained.model, config, ks=[1, 6], n_tasks=256, n_probes=2, seed=seed)
    assert comp.mse["icl"][1] < 0.8 * comp.mse["zero"][1]
    assert comp.mse["icl"][1] < 0.7 * comp.mse["icl"][0]
    control = icl_tasks.compare(icl_tasks.random_init(config), config, ks=[6], n_tasks=256, n_probes=2, seed=seed)
    assert control.mse["icl"][0] > comp.mse["zero"][1]
    assert comp.mse["ols"][1] < 1e-8  # k ≥ d, noiseless: OLS is exact
    with pytest.raises(ValueError, match="context lengths"):
        icl_tasks.compare(trained.model, config, ks=[7])


def test_delta_w_path_and_finetuning_shapes_and_identities():
    config = icl_tasks.ICLConfig(steps=1, batch=8, d_model=16, d_ff=32, k_max=6)
    model = icl_tasks.random_init(config)
    tasks = icl_tasks.sample_tasks(8, 6, 4, generator=generator(4))
    path = icl_tasks.delta_w_path(model, tasks, block=1)
    assert path.dW.shape == (8, 7, 32, 16)
    assert icl_tasks.mean_increment(path).shape == (6,)
    assert (path.patched - path.with_context).abs().max() < 1e-4 * path.with_context.abs().max()
    with pytest.raises(ValueError, match="block"):
        icl_tasks.delta_w_path(model, tasks, block=2)
    ft = icl_tasks.finetune_vs_delta_w(model, config, n_tasks=8, n_test=4)
    finetune, delta_w = ft.history["finetune"], ft.history["delta_w"]
    assert ft.history.steps.tolist() == list(range(7))
    assert finetune.shape == delta_w.shape == (7,)
    assert finetune[0] == pytest.approx(delta_w[0], rel=1e-5)  # no example, no update: the same model
    assert finetune[1] != finetune[0]
    with pytest.raises(ValueError, match="lr"):
        icl_tasks.finetune_vs_delta_w(model, config, lr=1.5)
    # the random-init control starts from the trained model's initial weights
    fresh = Transformer(config.transformer(), generator=generator(config.seed))
    assert torch.equal(model.w_in, fresh.w_in)


@pytest.mark.parametrize("seed", [1, 2])
def test_normalised_finetuning_is_stable_where_a_fixed_rate_diverges(seed):
    # large activations (embedding × 30) make ‖∇f‖² huge: the normalised step still halves each example's
    # error and stays finite; the test error with the examples' own labels falls below its start
    config = icl_tasks.ICLConfig(d=2, k_max=8, steps=1, batch=8, d_model=16, d_ff=32, seed=seed)
    model = icl_tasks.random_init(config)
    with torch.no_grad():
        model.w_in.mul_(30.0)
    ft = icl_tasks.finetune_vs_delta_w(model, config, n_tasks=16, n_test=8, seed=seed)
    assert torch.isfinite(torch.as_tensor(ft.history["finetune"])).all()
    assert ft.history["finetune"][-1] < ft.history["finetune"][0]


def test_increment_decay_and_recency_attention():
    assert icl_tasks.increment_decay([4, 4, 4, 2, 1, 1, 1, 1]) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="6 increments"):
        icl_tasks.increment_decay([1, 2, 3])
    with pytest.raises(ValueError, match="recency"):
        icl.ContextualBlock(recency=-1.0, generator=generator(0))
    prompts = random_prompts(n=32, t=17)
    decays = {}
    for recency in (0.0, 2.0):
        block = icl.ContextualBlock(kind="skip", generator=generator(6), recency=recency)
        with torch.no_grad():
            path = icl.implicit_gd(block, prompts)
        assert (path.patched - path.with_context).abs().max() < 1e-12  # the theorem holds with the bias too
        decays[recency] = icl_tasks.increment_decay(path.increments().mean(0).numpy())
    assert decays[0.0] < 0.3 and decays[2.0] > 0.6  # averaging attention decays, recency attention does not


def test_verify_reports_sv_ratios_and_a_perturbed_identity_fails():
    gen = generator(7)
    blocks = [icl.ContextualBlock(kind="skip", generator=gen) for _ in range(2)]
    exact = icl.verify(blocks, random_prompts())
    assert exact.dtype == F64 and exact.worst_sv_ratio() < 1e-13
    assert set(exact.sv_ratios) <= set(exact.errors) | {"block 0: implicit GD, every prefix"}
    perturbed = icl.verify(blocks, random_prompts(), scale=1.01)
    assert perturbed.errors["block 0: ΔW(C)"] > 1e-4 and perturbed.errors["block 1: ΔW(C)"] > 1e-4
    assert perturbed.errors["block 0: implicit GD, every prefix"] < 1e-12  # the GD path is not perturbed
    assert icl_tasks.check_identity_random({"skip": exact}).passed
    assert not icl_tasks.check_identity_random({"skip": perturbed}).passed
    full_rank = icl.Update(torch.randn(3, 5, 4, dtype=F64, generator=gen), torch.zeros(3, 4, dtype=F64))
    assert full_rank.sv_ratio().min() > 1e-3


def test_pattern_tasks_and_attention_measure():
    gen = generator(3)
    t = icl_tasks.sample_pattern_tasks(10, n_context=6, n_patterns=3, generator=gen)
    assert t.tokens.shape == (10, 7, 7) and t.y.shape == (10,) and t.pattern.shape == (10, 7)
    assert torch.count_nonzero(t.tokens[:, -1, -1]) == 0
    x = t.tokens[..., :-1]
    assert torch.equal(x[..., :3].argmax(-1), t.pattern)  # the relevant coordinate is 1, the others 0
    same = t.pattern[:, :-1] == t.pattern[:, -1:]
    labels = t.tokens[:, :-1, -1]
    for b in range(10):  # a task's label is a function of the relevant pattern
        if same[b].any():
            assert (labels[b][same[b]] == t.y[b]).all()
    with pytest.raises(ValueError, match="n_patterns"):
        icl_tasks.sample_pattern_tasks(2, n_patterns=1, generator=gen)
    model = icl_tasks.train_pattern_learner.__wrapped__(steps=0, n_context=6, n_patterns=3).model
    accuracy, mass, uniform = icl_tasks.attention_on_same_pattern(model, t)
    assert uniform == pytest.approx(float(same.float().mean()))
    with torch.no_grad():  # the mass is the query's attention on same-pattern context examples
        out, maps = model(t.tokens, return_attention=True)
    row = maps[0][:, 0, -1, :-1]
    expected = ((row * same).sum(-1) / row.sum(-1)).mean()
    assert mass == pytest.approx(float(expected), rel=1e-6)
    assert accuracy == pytest.approx(float((torch.sign(out[:, -1, 0]) == t.y).float().mean()))


@pytest.mark.parametrize("seed", [1, 2])
def test_pattern_learner_learns_to_attend_to_same_pattern_examples(seed):
    tasks = icl_tasks.sample_pattern_tasks(400, n_context=8, n_patterns=3,
                                           generator=generator(seed + 10))
    untrained = icl_tasks.train_pattern_learner.__wrapped__(steps=0, n_context=8, n_patterns=3, seed=seed).model
    trained = icl_tasks.train_pattern_learner.__wrapped__(steps=300, n_context=8, n_patterns=3, seed=seed)
    assert trained.history.steps.tolist() == [50, 100, 150, 200, 250, 300]
    trained = trained.model
    acc0, mass0, uniform = icl_tasks.attention_on_same_pattern(untrained, tasks)
    acc, mass, _ = icl_tasks.attention_on_same_pattern(trained, tasks)
    assert abs(mass0 - uniform) < 0.1 and acc0 < 0.8  # untrained: near-uniform attention, near chance
    assert mass > uniform + 0.3 and acc > 0.9


def test_polyak_step_is_the_normalised_lms_step_per_member():
    # f_b(θ_b) = ⟨θ_b, x_b⟩ is linear, so one step on |f_b − y_b| shrinks every member's error by exactly 1 − lr;
    # a member already at its target (zero gradient) does not move
    gen = generator(8)
    x, y = torch.randn(5, 3, generator=gen, dtype=F64), torch.randn(5, generator=gen, dtype=F64)
    theta = torch.zeros(5, 3, dtype=F64, requires_grad=True)
    with torch.no_grad():
        theta[4] = y[4] * x[4] / (x[4] @ x[4])
    optimizer = icl_tasks.PolyakStep([theta], lr=0.5)

    def error():
        value = ((theta * x).sum(-1) - y).abs()
        optimizer.losses = value.detach()
        return value

    before = error().detach()
    train.descend(optimizer, error)(0)
    after = error().detach()
    assert torch.allclose(after[:4], 0.5 * before[:4], atol=1e-12) and after[4] < 1e-12
    optimizer.losses = None
    with pytest.raises(RuntimeError, match="losses"):  # a loss that does not hand over its values
        optimizer.step()


# ------------------------------------------------------------------ the mechanisms of §14.5–14.9 (core modules)
def test_modular_division_table_is_correct_and_split_is_a_partition():
    a, b, c = modular.table(7, "div")
    assert len(c) == 7 * 6 and (b != 0).all()
    assert ((c * b - a) % 7 == 0).all()  # c = a / b  ⇔  c·b ≡ a (mod 7)
    data = modular.modular_data(7, "div", 0.5, seed=3)
    assert data.x.shape == (21, 14) and data.x_test.shape == (21, 14)
    assert torch.equal(data.x.sum(1), torch.full((21,), 2.0))  # two one-hot halves
    pairs = {tuple(r.nonzero().flatten().tolist()) for r in torch.cat([data.x, data.x_test])}
    assert len(pairs) == 42  # every equation once, in one of the two splits
    with pytest.raises(ValueError, match="prime"):
        modular.table(8)


def test_cross_entropy_and_accuracy_are_per_member():
    gen = generator(0)
    logits, labels = torch.randn(3, 5, 4, generator=gen), torch.tensor([0, 1, 2, 3, 0])
    ce = classify.cross_entropy(logits, labels)
    for k in range(3):
        assert torch.isclose(ce[k], torch.nn.functional.cross_entropy(logits[k], labels))
    acc = classify.accuracy(logits, labels)
    assert torch.allclose(acc, (logits.argmax(-1) == labels).float().mean(1))
    assert classify.first_step(np.array([0, 10, 20]), np.array([0.1, 0.95, 1.0]), 0.99) == 20.0
    assert np.isnan(classify.first_step(np.array([0, 10]), np.array([0.1, 0.5]), 0.99))


def test_decoupled_weight_decay_acts_per_member():
    # with a zero learning signal (all-zero inputs, biases only move), weight decay alone shrinks member 0's
    # first-layer weights by (1 − lr·λ)^steps and leaves member 1's (λ = 0) untouched
    model = BatchedMLP([3, 4, 2], 2, act="relu", init_std=0.5, generator=generator(1))
    w0 = model.weights[0].detach().clone()
    x, labels = torch.zeros(6, 3), torch.tensor([0, 1, 0, 1, 0, 1])
    classify.train_classifiers(model, x, labels, steps=5, lr=0.01, weight_decay=[2.0, 0.0], progress=False)
    assert torch.allclose(model.weights[0][0], w0[0] * (1 - 0.02) ** 5, atol=1e-6)
    assert torch.equal(model.weights[0][1], w0[1])


def test_prune_smallest_removes_the_smallest_remaining_fraction():
    w = torch.tensor([[[0.1, -3.0], [2.0, -0.5]], [[1.0, 2.0], [3.0, 4.0]]])  # (K=2, 2, 2)
    mask = pruning.prune_smallest(w.abs(), torch.ones_like(w), 0.5)
    assert torch.equal(mask[0], torch.tensor([[0.0, 1.0], [1.0, 0.0]]))
    assert torch.equal(mask[1], torch.tensor([[0.0, 0.0], [1.0, 1.0]]))
    again = pruning.prune_smallest(w.abs(), mask, 0.5)  # half of the two that are left
    assert again.sum() == 2 and pruning.remaining([again]) == 0.25
    target = w.clone()
    pruning.apply_masks([target], [again])
    assert torch.equal(target[0], torch.tensor([[0.0, -3.0], [0.0, 0.0]]))


def test_width_masks_make_a_masked_member_the_narrower_network_and_keep_it_so_in_training():
    """图14.8's width sweep: member k of a [d, H, c] ensemble under width_masks computes the width-m_k network of its
    first m_k hidden units (the padding reaches no output), and stays one through Adam steps with the masks re-applied."""
    gen = generator(6)
    model = BatchedMLP([5, 8, 3], 2, act="relu", init_std=0.5, generator=gen)
    masks = pruning.width_masks(model.widths, [3, 8])
    assert [tuple(m.shape) for m in masks] == [(2, 5, 8), (2, 8, 3)] and masks[0][0].sum() == 15
    x, labels = torch.randn(10, 5, generator=gen), torch.randint(0, 3, (10,), generator=gen)
    with torch.no_grad():
        pruning.apply_masks(model.weights, masks)
    classify.train_classifiers(model, x, labels, steps=5, lr=0.05, progress=False,
                               after_step=lambda: pruning.apply_masks(model.weights, masks))
    w1, b1, w2, b2 = model.weights[0][0], model.biases[0][0], model.weights[1][0], model.biases[1][0]
    assert torch.all(w1[:, 3:] == 0) and torch.all(w2[3:] == 0)
    narrow = torch.relu(x @ w1[:, :3] + b1[:, :3]) @ w2[:3] + b2
    assert torch.allclose(model(x)[0], narrow, atol=1e-6)
    with pytest.raises(ValueError, match="hidden widths"):
        pruning.width_masks(model.widths, [3, 9])


def test_min_norm_random_features_interpolate_beyond_the_threshold():
    gen = generator(2)
    x, y = torch.randn(20, 5, generator=gen, dtype=torch.float64), torch.randn(20, 3, generator=gen, dtype=torch.float64)
    W, b = random_features.draw_features(5, 60, 2, generator=generator(4))
    a = random_features.fit_random_features(x, y, W, b)
    assert torch.allclose(random_features.predict(x, W, b, a), y.expand(2, -1, -1), atol=1e-8)
    phi = random_features.features(x, W, b)
    assert torch.allclose(a, torch.linalg.pinv(phi) @ y, atol=1e-8)  # the minimum-norm interpolant
    ridge = random_features.fit_random_features(x, y, W, b, ridge=1.0)
    assert (ridge.norm(dim=(1, 2)) < a.norm(dim=(1, 2))).all()


def test_bezier_and_line_join_the_endpoints():
    model = BatchedMLP([4, 6, 3], 2, act="relu", init_std=0.5, generator=generator(3))
    w1, w2 = connectivity.member(model, 0), connectivity.member(model, 1)
    theta = {n: torch.full_like(p, 0.3) for n, p in w1.items()}
    t = torch.tensor([0.0, 0.5, 1.0])
    for points in (connectivity.line(w1, w2, t), connectivity.bezier(w1, theta, w2, t)):
        for n in w1:
            assert torch.allclose(points[n][0], w1[n][0]) and torch.allclose(points[n][2], w2[n][0])
    mid = connectivity.line(w1, w2, t)
    assert all(torch.allclose(mid[n][1], (w1[n][0] + w2[n][0]) / 2) for n in w1)
    x = torch.randn(5, 4, generator=generator(5))
    with torch.no_grad():
        assert torch.allclose(connectivity.mlp_outputs(connectivity.line(w1, w2, t[[0, 2]]), x), model(x), atol=1e-6)


def test_the_bezier_bend_trains_on_the_settings_device(monkeypatch):
    """The bend of 图14.9's curve with θ on another device (tests/device_support.py): an endpoint, a datum or a t
    left on the CPU fails, as it would on a GPU; θ comes back on the CPU."""
    records = []
    monkeypatch.setattr(connectivity, "on_device", on_meta)
    monkeypatch.setattr(connectivity, "run", steps_only(records, recorded=False))  # its record reads the loss
    model = BatchedMLP([4, 6, 3], 2, act="relu", init_std=0.5, generator=generator(3))
    w1, w2 = connectivity.member(model, 0), connectivity.member(model, 1)
    x, labels = torch.randn(5, 4, generator=generator(5)), torch.arange(5) % 3
    with OneDevicePerCall():
        theta, _ = connectivity.train_bend(w1, w2, x, labels, steps=2, lr=0.01, n_points=3, generator=generator(6),
                                           progress=False)
    assert len(records) == 1 and sorted(theta) == sorted(w1)
    assert {p.device.type for p in theta.values()} == {"cpu"}


def test_the_finetuning_runs_on_the_settings_device(monkeypatch):
    """Dherin et al.'s per-example fine-tuning (PolyakStep on ΔW₁) and its ΔW test with the model on another device
    (tests/device_support.py): a task or test query left on the CPU fails, as it would on a GPU."""
    records = []
    monkeypatch.setattr(icl_tasks, "on_device", on_meta)
    monkeypatch.setattr(icl_tasks, "run", steps_only(records))
    config = icl_tasks.ICLConfig(steps=1, batch=8, d_model=16, d_ff=32, k_max=4)
    model = icl_tasks.random_init(config)
    with OneDevicePerCall():
        icl_tasks.finetune_vs_delta_w.__wrapped__(model, config, n_tasks=4, n_test=2)
    assert {name: value.device.type for name, value in records[0].items()} == {"finetune": "meta", "delta_w": "meta"}
    assert {p.device.type for p in model.parameters()} == {"cpu"}  # back


def test_the_in_context_learners_train_on_the_settings_device(monkeypatch):
    """The three training loops of ch14's in-context learners (the regression learner, the pattern classifier, the
    explorer's adaptation) with the model on another device (tests/device_support.py): a task left on the CPU fails,
    as it would on a GPU.  Two steps each."""
    records = []
    monkeypatch.setattr(icl_tasks, "on_device", on_meta)
    monkeypatch.setattr(icl_tasks, "run", steps_only(records, recorded=False))  # its records average losses
    config = icl_tasks.ICLConfig(steps=2, batch=4, seed=0)
    base = Transformer(config.transformer(), generator=generator(0))
    with OneDevicePerCall():
        learner = icl_tasks.train_icl.__wrapped__(config).model
        classifier = icl_tasks.train_pattern_learner.__wrapped__(steps=2, n_context=4, n_patterns=2).model
        adapted = icl_tasks.adapt_learner(base, 0.5, 3, steps=2, seed=0)
    assert len(records) == 3  # each loop took its two steps on the meta device
    assert {p.device.type for net in (learner, classifier, adapted) for p in net.parameters()} == {"cpu"}  # back


def test_the_classifiers_train_on_the_settings_device(monkeypatch):
    """ch14's grokking, lottery-ticket and mode-connectivity runs train through classify.train_classifiers: with
    the model on another device (tests/device_support.py), weight decay, the pruning masks kept on the CPU (the
    after-step hook) and the records all compute there."""
    records = []
    monkeypatch.setattr(classify, "on_device", on_meta)
    monkeypatch.setattr(classify, "run", steps_only(records))
    model = BatchedMLP([3, 8, 4], 2, act="relu", init_std=0.5, generator=generator(0))
    masks = [torch.ones_like(w) for w in model.weights]
    x, labels = torch.randn(10, 3, generator=generator(1)), torch.arange(10) % 4
    with OneDevicePerCall():
        classify.train_classifiers(model, x, labels, x_test=x[:4], labels_test=labels[:4], steps=2, lr=0.01,
                                   weight_decay=[0.1, 0.0], after_step=lambda: pruning.apply_masks(model.weights, masks),
                                   progress=False)
    assert sorted(records[0]) == ["test_acc", "test_loss", "train_acc", "train_loss"]
    assert {value.device.type for value in records[0].values()} == {"meta"}


def test_the_double_descent_fits_run_on_the_settings_device(monkeypatch):
    """图14.8's random-features fits: data and features drawn on the CPU, the batched SVDs on the settings' device,
    here the meta device (tests/device_support.py): a feature matrix or a label left on the CPU fails."""
    from types import SimpleNamespace

    from device_support import META, MetaReadsAsZeros

    monkeypatch.setattr(icl_tasks, "settings", lambda: SimpleNamespace(device=META))
    config = icl_tasks.DoubleDescentConfig(n_train=20, n_test=10, widths=(5, 30), n_draws=2)
    with OneDevicePerCall(), MetaReadsAsZeros():
        result = icl_tasks.run_double_descent.__wrapped__(config)
    assert result.test_error.tolist() == result.train_error.tolist() == [0.0, 0.0]  # read from meta tensors
