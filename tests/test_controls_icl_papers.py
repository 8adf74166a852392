"""Negative controls of the papers' notebook (chapters/icl_papers.py; see tests/test_claim_controls.py).

Each control runs a claim's own check on a real run of the setting its paper contrasts it with, and asserts that the
check fails: for Boix-Adserà et al.'s template tasks, the fully connected network against the transformer (their
Appendix I), the transformer against the network, and the plain transformer at the same sample size against the one
with a·I (their Observation 1.2); for Li et al., training tasks that break their Condition 3.2, a fraction α below what
the step budget learns (for the steps and for the testing prompt length needed), out-of-domain patterns whose
coefficients sum below 1, and pruning the largest MLP neurons first; for Akyürek et al.'s probing (Fig. 4), the learner
trained on one fixed w (their control task), and for the approach to the Bayes estimator with width, narrow learners
throughout.  The notebook's own run (the same configuration) is the positive twin.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from companion.experiments import icl_papers as papers

SEED = 100  # a design seed


@pytest.fixture(scope="module")
def template() -> papers.TemplateResult:
    """The notebook's template-task configuration, all three variants, on one design seed."""
    return papers.run_template(papers.TemplateConfig(seed=SEED))


@pytest.mark.contrast("a fully connected network instead of the transformer (Boix-Adserà App. I)")
def test_control_chicl_boix_transformer_ood(template):
    v = papers.check_transformer_ood(template, variant="MLP")
    assert not v.passed, v.measured_line()


@pytest.mark.contrast("the transformer instead of the fully connected network (Boix-Adserà Fig. 2)")
def test_control_chicl_boix_mlp_chance(template):
    v = papers.check_mlp_chance(template, variant="transformer")
    assert not v.passed, v.measured_line()


@pytest.mark.contrast("the plain transformer, without a·I, at the same sample size (Boix-Adserà Obs. 1.2)")
def test_control_chicl_boix_kq_identity(template):
    v = papers.check_kq_identity(template, variant="transformer")
    assert not v.passed, v.measured_line()


def test_template_positive_twins(template):
    """On the same run the three claims hold for the variants they are about."""
    for verdict in (papers.check_transformer_ood(template), papers.check_mlp_chance(template),
                    papers.check_kq_identity(template)):
        assert verdict.passed, verdict.measured_line()


def test_template_samples_fill_the_templates_with_distinct_symbols():
    import numpy as np

    from companion.kit.seeds import numpy_rng

    x, y = papers.template_samples("variable assignment", 200, np.arange(10, 20), numpy_rng(0))
    assert x.shape == (200, 3) and set(y.tolist()) == {0, 1}
    assert ((x >= 10) & (x < 20)).all() and (x[:, 0] != x[:, 1]).all()
    assert ((x[:, 2] == x[:, 0]) == (y == 1)).all() and ((x[:, 2] == x[:, 1]) == (y == 0)).all()


def test_kq_and_vo_identities_enter_only_where_switched_on():
    """a·I adds a·x_i·x_j to the scores and b·I adds b·attn X to a head's output, for flagged members only."""
    import torch

    from companion.core.transformer import TransformerConfig

    cfg = TransformerConfig(vocab_size=12, max_len=3, d_model=8, n_layers=1, n_heads=2, d_ff=0, d_out=2, norm="none",
                            causal=False)
    plain = papers.SymbolTransformer(cfg, n_members=2, generator=torch.Generator().manual_seed(0),
                                     kq_identity=[False, True], vo_identity=[False, True], identity_init=0.7)
    x = torch.randint(12, (5, 3), generator=torch.Generator().manual_seed(1))
    out = plain(x)
    with torch.no_grad():
        plain.a.zero_(), plain.b.zero_()
    base = plain(x)
    assert torch.equal(out[0], base[0])          # member 0: the flags are off, a and b change nothing
    assert not torch.allclose(out[1], base[1])   # member 1: they enter


@pytest.fixture(scope="module")
def copying() -> papers.CopyResult:
    """The notebook's copying configuration, plain and with b·I, on one design seed."""
    return papers.run_copy(papers.CopyConfig(seed=SEED))


@pytest.mark.contrast("the network with b·I added to W_V W_Oᵀ (Boix-Adserà Thm 4.2)")
def test_control_chicl_boix_copy_width(copying):
    v = papers.check_copy_width(copying, variant="transformer + b·I")
    assert not v.passed, v.measured_line()


@pytest.mark.contrast("the plain network, without b·I (Boix-Adserà Thm 4.1)")
def test_control_chicl_boix_copy_vo_identity(copying):
    v = papers.check_copy_vo_identity(copying, variant="transformer")
    assert not v.passed, v.measured_line()


def test_copy_positive_twins(copying):
    for verdict in (papers.check_copy_width(copying), papers.check_copy_vo_identity(copying)):
        assert verdict.passed, verdict.measured_line()


def test_the_copying_network_has_no_position_vector_and_a_tied_readout():
    """logits = Attn(X) W^emᵀ with one token: the softmax is 1, so a head is x W_V W^attn (+ b x), read by W^em."""
    import torch

    from companion.core.transformer import TransformerConfig

    cfg = TransformerConfig(vocab_size=10, max_len=1, d_model=8, n_layers=1, n_heads=2, d_ff=0, norm="none",
                            causal=False)
    net = papers.SymbolTransformer(cfg, n_members=1, generator=torch.Generator().manual_seed(0), vo_identity=True,
                                   attention_only=True, identity_init=0.3)
    x = torch.arange(10)[:, None]
    e, layer = net.w_em[0], net.layers[0]
    expected = (e @ layer.w_v[0] @ layer.w_attn[0] + 2 * 0.3 * e) @ e.T  # two heads, each adding b·x
    assert torch.allclose(net(x)[0, :, 0], expected, atol=1e-5)
    assert not net.x_pos.requires_grad and float(net.x_pos.abs().max()) == 0.0


# ----------------------------------------------------------------------------------------------- Li et al.
@pytest.fixture(scope="module")
def li() -> papers.PatternICLRun:
    """The notebook's Li et al. configuration (all five variants, one batched run) on one design seed."""
    return papers.train_pattern_icl(papers.PatternICLConfig(seed=SEED))


@pytest.mark.contrast("training tasks that break Condition 3.2: each pattern always on one side (Li et al. Thm 3.3)")
def test_control_chicl_li_unseen_tasks(li):
    v = papers.check_li_unseen(li, kind="one-sided")
    assert not v.passed, v.measured_line()
    assert li.accuracy[-1, li.member("one-sided", 0.3)] < 0.7  # it answers from its weights, not the context


@pytest.mark.contrast("α below what the step budget learns: α = 0.2 against α = 0.1 (Li et al. Thm 3.3)")
def test_control_chicl_li_alpha(li):
    v = papers.check_li_alpha(li, high=0.2, low=0.1)
    assert not v.passed, v.measured_line()


@pytest.mark.contrast("out-of-domain patterns whose coefficients sum to 0.5 < 1 (Li et al. Thm 3.6)")
def test_control_chicl_li_ood(li):
    totals = (0.5, 1.0, 1.5)
    ood = papers.pattern_ood_accuracy(li, li.member("cover", 0.3), totals)
    v = papers.check_li_ood(totals, ood, judged=(0.5,))
    assert not v.passed, v.measured_line()
    twin = papers.check_li_ood(totals, ood)
    assert twin.passed, twin.measured_line()


@pytest.mark.contrast("the variant trained at α = 0.1, which the step budget does not teach (Li et al. Thm 3.3)")
def test_control_chicl_li_prompt_length(li):
    """Trained at the smallest α the run reaches accuracy 0.9 at no testing prompt length; the main variant does."""
    def accuracy(kind: str, alpha: float) -> np.ndarray:
        return papers.pattern_length_accuracy(li, li.member(kind, alpha), papers.LI_LENGTHS, papers.LI_TEST_ALPHAS)

    v = papers.check_li_prompt_length(accuracy("cover", 0.1))
    assert not v.passed, v.measured_line()
    assert np.isnan(papers.prompt_length_needed(accuracy("cover", 0.1))).all()
    twin = papers.check_li_prompt_length(accuracy("cover", 0.3))
    assert twin.passed, twin.measured_line()


def test_prompt_length_needed_is_the_first_length_at_the_level():
    acc = np.array([[0.5, 0.8, 0.91, 0.95], [0.2, 0.3, 0.4, 0.5]])
    need = papers.prompt_length_needed(acc, lengths=(1, 2, 4, 8), level=0.9)
    assert need[0] == 4.0 and np.isnan(need[1])


def test_li_samples_check_compares_the_training_set_sizes_needed():
    """chicl.li-samples (an exploration): the ratio of the smallest N reaching 0.9 at α = 0.2 and 0.5; a size that
    never reaches it counts as twice the largest."""
    sizes, alphas = (8, 16, 32, 64), (0.2, 0.5)
    def verdict(low: list[float], high: list[float]):
        return papers.check_li_samples(papers.SampleCountResult(sizes, alphas, np.array([low, high])))

    passed = verdict([0.5, 0.6, 0.8, 0.95], [0.6, 0.95, 1.0, 1.0])  # 64 / 16 = 4
    assert passed.passed and passed.measured["needed"] == [64.0, 16.0]
    assert not verdict([0.5, 0.6, 0.95, 0.8], [0.6, 0.7, 0.95, 1.0]).passed  # 32 / 32 = 1
    never = verdict([0.5, 0.6, 0.7, 0.8], [0.6, 0.7, 0.95, 1.0])  # 128 / 32 = 4
    assert never.passed and never.measured["needed"][0] == 128.0
    assert papers.LI_SAMPLES.kind == "exploration"


def test_li_samples_run_trains_one_member_per_size_and_alpha():
    """A small real run: fixed training sets (``pools``) of the right sizes, one accuracy per (α, N), no NaN."""
    r = papers.run_li_samples(SEED, sizes=(4, 64), alphas=(0.2, 0.5), steps=20, n_test=50)
    assert r.accuracy.shape == (2, 2) and np.isfinite(r.accuracy).all()
    assert ((r.accuracy >= 0) & (r.accuracy <= 1)).all()
    with pytest.raises(ValueError, match="pools"):
        papers.train_pattern_icl(papers.PatternICLConfig(variants=(("cover", 0.3),), pools=(4, 8), steps=1))


def test_bernoulli_prompts_share_the_pattern_at_rate_alpha():
    """With ``bernoulli`` the count of same-pattern examples varies (some prompts hold none), its mean is α·l."""
    import torch

    from companion.kit.seeds import generator

    M, d, l = 8, 16, 10
    tasks = papers.pattern_training_tasks("cover", M)[None]
    p, _ = papers.pattern_prompts(tasks, torch.tensor([0.3]), 4000, l, torch.eye(d)[:M], 8, generator(0),
                                  bernoulli=True)
    pattern = p[..., :M].argmax(-1)
    count = (pattern[:, :, :-1] == pattern[:, :, -1:]).sum(-1).float()
    assert abs(float(count.mean()) - 3.0) < 0.1 and float(count.min()) == 0.0 and float(count.std()) > 1.0


def test_li_positive_twins_and_pruning_contrast(li):
    """On the same run the claims hold; pruning the largest 20% of the neurons costs more than the exploration's
    bound, the smallest 20% less (the exploration's contrast, Li et al. Thm 3.7)."""
    for verdict in (papers.check_li_unseen(li), papers.check_li_alpha(li)):
        assert verdict.passed, verdict.measured_line()
    pruning = papers.prune_pattern_mlp(li, li.member("cover", 0.3))
    assert not papers.check_li_pruning(pruning, order="largest").passed
    assert papers.check_li_pruning(pruning).passed
    assert pruning.norms[0] < 0.3 * np.median(pruning.norms)  # some neurons stay small (their (14))


def test_li_prompts_follow_the_task_and_alpha():
    """Exactly round(α·l) context examples share the query's pattern and its label; the task's other pattern carries
    the opposite label; the query's own label is hidden (0) in its token."""
    import torch

    from companion.kit.seeds import generator

    M, d, l = 8, 16, 20
    tasks = papers.pattern_training_tasks("cover", M)[None].expand(2, -1, -1)
    p, y = papers.pattern_prompts(tasks, torch.tensor([0.3, 0.5]), 200, l, torch.eye(d)[:M], 8, generator(0))
    assert p.shape == (2, 200, l + 1, d + 1) and (p[:, :, -1, -1] == 0).all()
    pattern = p[..., :M].argmax(-1)  # the relevant pattern of every token
    same = pattern[:, :, :-1] == pattern[:, :, -1:]
    assert (same.sum(-1)[0] == 6).all() and (same.sum(-1)[1] == 10).all()
    labels = p[:, :, :-1, -1]
    assert (labels[same] == y[:, :, None].expand_as(same)[same]).all()


def test_li_task_sets():
    """The cycle meets Condition 3.2 (every pattern with both labels); the one-sided set does not; 48 unseen each."""
    cover, one_sided = (papers.pattern_training_tasks(k, 8) for k in ("cover", "one-sided"))
    assert set(cover[:, 0].tolist()) == set(cover[:, 1].tolist()) == set(range(8))
    assert set(one_sided[:, 0].tolist()) == set(range(4)) and set(one_sided[:, 1].tolist()) == set(range(4, 8))
    assert len({tuple(t) for t in one_sided.tolist()}) == 8
    assert len(papers.unseen_tasks(cover, 8)) == len(papers.unseen_tasks(one_sided, 8)) == 48


def test_pattern_transformer_has_no_residual_and_prunes_neurons():
    """F = aᵀ ReLU(W_O W_V Σ attn p): zeroing W_O zeroes F (nothing bypasses the MLP); keep=0 removes a neuron."""
    import torch

    from companion.kit.seeds import generator

    net = papers.PatternTransformer(1, 17, 8, 8, 6, 1.0, generator(0))
    p = torch.randn(1, 5, 4, 17, generator=generator(1))
    out, attn = net(p)
    assert torch.allclose(attn.sum(-1), torch.ones(1, 5))
    keep = torch.ones(1, 6)
    keep[0, 2] = 0
    h = torch.relu(torch.einsum("kbl,kbld,kad,kma->kbm", attn, p[:, :, :-1], net.w_v, net.w_o))
    assert torch.allclose(net(p, keep)[0], (h * keep[:, None]) @ net.a, atol=1e-6)
    with torch.no_grad():
        net.w_o.zero_()
    assert torch.equal(net(p)[0], torch.zeros(1, 5))


# ----------------------------------------------------------------------------------------------- Akyürek et al.
def test_akyurek_gd_layer_holds_on_random_prompts():
    """The constructed linear-attention layers equal 1 and 4 gradient steps to rounding (positive twin)."""
    v = papers.check_gd_layer(papers.check_construction(SEED))
    assert v.passed, v.measured_line()


def test_control_chicl_akyurek_gd_layer():
    """An identity's control is a perturbed input: weights built for a step 10% off the one gradient descent takes."""
    check = papers.check_construction(SEED, eta=0.5, eta_weights=0.55)
    assert check.error[1] > 0.05
    v = papers.check_gd_layer(check)
    assert not v.passed, v.measured_line()


def test_akyurek_one_layer_is_chapter14_gd_step():
    """One constructed layer predicts ⟨(η/k) Xᵀy, x_q⟩, chapter 14's one-step baseline at rate η/k."""
    import torch

    from companion.experiments import ch14_phenomena as regression
    from companion.kit.seeds import generator

    t = regression.sample_tasks(32, 6, 3, generator=generator(SEED), dtype=torch.float64)
    layer = papers.gd_construction(3, 0.7)(t.tokens())[0]
    expected = (regression.gd_weights(t.xs, t.ys, 0.7 / 6) * t.xq).sum(-1)
    assert torch.allclose(layer, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.contrast("depth 1 throughout instead of depths 1, 2, 4 (Akyürek Fig. 3)")
def test_control_chicl_akyurek_depth():
    """Three depth-1 learners (a real run): they stay on one GD step and do not approach least squares."""
    v = papers.check_akyurek_depth(papers.train_depths(papers.DepthConfig(seed=SEED, depths=(1, 1, 1))))
    assert not v.passed, v.measured_line()


def test_akyurek_depth_positive_twin():
    v = papers.check_akyurek_depth(papers.train_depths(papers.DepthConfig(seed=SEED)))
    assert v.passed, v.measured_line()


@pytest.fixture(scope="module")
def clean_depths() -> papers.DepthResult:
    """The notebook's noiseless learners (depths 1, 2, 4) on one design seed, reused by the noise experiment."""
    return papers.train_depths(papers.DepthConfig(seed=SEED))


@pytest.fixture(scope="module")
def noise_run(clean_depths) -> papers.NoiseResult:
    """The notebook's noise experiment (σ = 2) on the same seed: the positive twin of both noise claims."""
    return papers.run_noise(clean_depths, noise=2.0)


@pytest.mark.contrast("learners trained without label noise in place of the noisy ones (Akyürek §4)")
def test_control_chicl_akyurek_noise_ridge(clean_depths):
    """The other noise level (a real run): learners trained on noiseless prompts, compared on noisy ones, sit nearer
    the smaller ridge λ*/4 than the Bayes ridge λ* — the first condition fails."""
    v = papers.check_akyurek_noise(papers.run_noise(clean_depths, noise=2.0, train_noise=0.0))
    assert not v.passed and not v.conditions[0].passed, v.measured_line()


def test_akyurek_noise_ridge_positive_twin(noise_run):
    v = papers.check_akyurek_noise(noise_run)
    assert v.passed, v.measured_line()


@pytest.mark.contrast("the smallest learner, depth 1 throughout, instead of depths 1, 2, 4 (Akyürek §4)")
def test_control_chicl_akyurek_bayes():
    """Three depth-1 learners trained on the noisy prompts (a real run): they stay far from the Bayes risk."""
    v = papers.check_akyurek_bayes(papers.run_noise(papers.train_depths(papers.DepthConfig(seed=SEED, depths=(1, 1, 1))),
                                                    noise=2.0))
    assert not v.passed and not v.conditions[2].passed, v.measured_line()


def test_akyurek_bayes_positive_twin(noise_run):
    v = papers.check_akyurek_bayes(noise_run)
    assert v.passed, v.measured_line()


def test_ridge_at_sigma_squared_is_the_bayes_estimator(noise_run):
    """On noisy prompts (τ = 1) ridge regression with λ = σ² has the least error of the λ grid (least squares
    included): the Bayes risk the claims measure against; on noiseless prompts least squares is exact (k > d)."""
    fit = noise_run.on_noisy
    assert fit.lams[int(np.argmin(fit.mse_ridge))] == fit.noise ** 2 == 4.0
    assert fit.bayes_risk == fit.mse_ridge.min()
    clean = noise_run.clean_on_clean
    assert clean.noise == 0.0 and clean.bayes_risk == clean.mse_ridge[0] < 1e-6


def test_noisy_learners_train_and_test_on_noisy_prompts(noise_run):
    """``DepthConfig.noise`` reaches training and test prompts: no predictor beats the query's own noise σ² = 4 there
    (the noisy learners' error and the Bayes risk lie above it), while the deepest noiseless learner, on noiseless
    prompts, ends below 1."""
    assert noise_run.noisy.config.noise == 2.0 and noise_run.noisy.config.seed == SEED
    assert min(noise_run.noisy.mse.min(), noise_run.on_noisy.mse.min(), noise_run.on_noisy.bayes_risk) > 4.0
    assert noise_run.clean_on_clean.mse[-1] < 1.0


# ----------------------------------------------------------------------------------------------- Dherin et al. §4.3
@pytest.mark.contrast("a network pre-trained on one task: retrieval, nothing to learn in context (Dherin et al. §4.3)")
def test_control_chicl_dherin_finetune_similar():
    """Chapter 14's one-task network (its control of ch14.finetune): fine-tuning still learns the new task, its
    ΔW(C_i) does not — the curves are not similar and ΔW does not halve the loss."""
    R = papers.regression
    config = R.ICLConfig(steps=300, seed=1, n_pretrain_tasks=1)
    run = R.finetune_vs_delta_w(R.train_icl(config).model, config, n_tasks=64, n_test=32, seed=SEED + 2)
    v = papers.check_dherin_similar(run)
    assert not v.passed, v.measured_line()
    assert v.conditions[0].passed and not v.conditions[1].passed, v.measured_line()


def test_akyurek_sherman_morrison_holds_on_random_prompts():
    v = papers.check_sherman_morrison_ridge(papers.check_sherman_morrison(SEED))
    assert v.passed, v.measured_line()


def test_control_chicl_akyurek_sherman_morrison():
    """An identity's control is a perturbed input: the recursion started from A_0 = 1.1·λ·I."""
    error = papers.check_sherman_morrison(SEED, lam=0.1, lam_start=0.11)
    assert error > 1e-3
    assert not papers.check_sherman_morrison_ridge(error).passed


def test_finetune_gap_is_the_largest_factor_between_the_curves():
    from companion.core.train import History

    h = History(np.arange(4), series={"finetune": np.array([4.0, 3.0, 2.0, 1.0]),
                                      "delta_w": np.array([4.0, 1.0, 1.0, 0.5])})
    gap = papers.finetune_gap(papers.regression.FineTuning(h, zero=4.0))
    assert np.isclose(np.exp(gap), 3.0)


# ------------------------------------------------------------------------------------------- Akyürek et al. §5, Fig. 4
@pytest.fixture(scope="module")
def probe_run() -> papers.ProbeResult:
    """The notebook's probing (section 10) on a design seed: chapter 14's learner at its quick configuration and the
    same architecture, budget and seed trained on one fixed w (the paper's control task)."""
    R = papers.regression
    config = R.ICLConfig(steps=2000, batch=128, seed=SEED)
    learners = {"trained": R.train_icl(config).model,
                "fixed w": R.train_icl(dataclasses.replace(config, n_pretrain_tasks=1)).model}
    return papers.run_probe(learners, config.d, papers.ProbeConfig(seed=SEED))


@pytest.mark.contrast("a learner trained on one fixed weight vector (Akyürek Fig. 4's control task; theirs is w = 1)")
def test_control_chicl_akyurek_probe(probe_run):
    """The fixed-w learner in the learner's place, the trained one as its reference: its last block does not read
    w_OLS 0.02 above the trained learner's best layer — it stays below it."""
    v = papers.check_akyurek_probe(probe_run, learner="fixed w", control="trained")
    assert not v.passed, v.measured_line()
    lead = v.conditions[-1]
    assert not lead.passed and lead.value < lead.bound - papers.PROBE_GAP, v.measured_line()


def test_akyurek_probe_positive_twin(probe_run):
    v = papers.check_akyurek_probe(probe_run)
    assert v.passed, v.measured_line()
    assert all(abs(r[0]) < 0.1 for d in probe_run.r2.values() for r in d.values())  # the query's embedding: no context


def test_query_states_end_in_the_learners_prediction():
    """The last query state read out is the model's prediction; there is one state per block and the embedding."""
    R = papers.regression
    config = R.ICLConfig(d=2, k_max=6, d_model=16, d_ff=32, steps=1, batch=8, seed=SEED)
    model = R.random_init(config)
    t = R.sample_tasks(32, 5, config.d, generator=papers.generator(SEED, 1))
    states = papers.query_states(model, t.tokens())
    assert states.shape == (config.n_layers + 1, 32, config.d_model)
    prediction = papers.icl.readout(model, states[-1])[:, 0]
    assert torch.allclose(prediction, R.predict(model, t.tokens()), atol=1e-5)
    targets = papers.probe_targets(t)
    assert torch.allclose(targets["w_OLS"], t.w, atol=1e-4)  # k = 5 ≥ d = 2, noiseless: least squares recovers w
    assert torch.allclose(targets["Xᵀy"], (t.xs.transpose(1, 2) @ t.ys[..., None])[..., 0])


def test_probes_read_a_planted_map_and_not_noise():
    """fit_probes on member 0 = a smooth function of its features (R² near 1), member 1 = independent noise (R² ≤ ~0)."""
    gen = papers.generator(SEED, 2)
    config = papers.ProbeConfig(n_train=1024, n_test=512, steps=300, seed=SEED)
    x = torch.randn(2, 1536, 8, generator=gen)
    y = torch.stack([torch.tanh(x[0, :, :3]) + x[0, :, 3:6] ** 2, torch.randn(1536, 3, generator=gen)])
    r2 = papers.fit_probes(x, y, config)
    assert r2[0] > 0.9 and r2[1] < 0.05, r2


# ------------------------------------------------------------------------------------ Akyürek et al. §4, width
@pytest.mark.contrast("narrow learners throughout: three width-8 learners instead of widths 8, 16, 32 (Akyürek §4)")
def test_control_chicl_akyurek_width():
    """Three width-8 learners of chapter 14's quick configuration (seeds 100–102, a real run) in the places of widths
    8, 16 and 32: their excess risk over the Bayes estimator does not fall by the claim's factor."""
    R = papers.regression
    learners = [papers.width_learner(R.ICLConfig(steps=2000, batch=128, seed=SEED + i), 8) for i in range(3)]
    excess, bayes = papers.bayes_excess(learners, 4, 16, 512, SEED)
    v = papers.check_akyurek_width(papers.WidthResult((8, 8, 8), excess, bayes))
    assert not v.passed and not v.conditions[1].passed, v.measured_line()


def test_bayes_excess_is_zero_for_the_bayes_estimator_itself():
    """bayes_excess measures against minimum-norm least squares: its MSE is 0 from k = d on (noiseless), positive
    below; a learner's excess is its MSE minus that."""
    R = papers.regression
    model = R.random_init(R.ICLConfig(d=2, k_max=4, d_model=8, d_ff=16, seed=SEED))
    excess, bayes = papers.bayes_excess([model], 2, 4, 256, SEED)
    assert excess.shape == (1, 4) and bayes[0] > 0.1 and np.all(bayes[1:] < 1e-6)
    assert np.all(excess > 0)
