"""The shared training losses: hand-computed values, brute-force references, and equality with the old copies."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from xlsent.training.losses import (
    CenterLoss,
    ContrastiveLoss,
    CosineDistanceLoss,
    L2ConstrainedSoftmaxLoss,
    MultipleNegativesRankingLoss,
    NPairLoss,
    PairDiscriminator,
    PairDiscriminatorLoss,
    SimilarityDistillationLoss,
    TeacherRankingLoss,
    TeacherStudentLoss,
    TripletRankingLoss,
    WassersteinCritic,
    select_negatives,
)

R = 1 / math.sqrt(2)
# a = (e1, e2), b = (e1, e1 + e2): cos(a_i, b_j) = [[1, R], [0, R]]
A = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
B = torch.tensor([[1.0, 0.0], [1.0, 1.0]])


def gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def cosines(a: torch.Tensor, b: torch.Tensor) -> np.ndarray:
    """Brute force: cos(a_i, b_j) in float64, one pair at a time."""
    a64, b64 = a.double().numpy(), b.double().numpy()
    return np.array([[x @ y / (np.linalg.norm(x) * np.linalg.norm(y)) for y in b64] for x in a64])


# --- select_negatives / TripletRankingLoss -------------------------------------------------------------------


def test_select_negatives_hardest_first_then_distinct_off_diagonal() -> None:
    sim = torch.randn(9, 9, generator=gen(1))
    neg = select_negatives(sim, 4, gen(2))
    assert neg.shape == (9, 4)
    for i, row in enumerate(neg.tolist()):
        others = [j for j in range(9) if j != i]
        assert row[0] == max(others, key=lambda j: sim[i, j].item())
        assert len(set(row)) == 4 and i not in row
    assert torch.equal(neg, select_negatives(sim, 4, gen(2)))  # same generator state, same draw
    assert not torch.equal(neg, select_negatives(sim, 4, gen(3)))  # the random part comes from the generator


def test_select_negatives_caps_n_at_batch_minus_one() -> None:
    sim = torch.randn(3, 3, generator=gen(1))
    neg = select_negatives(sim, 10, gen(0))
    assert neg.shape == (3, 2)
    assert [sorted(row) for row in neg.tolist()] == [[1, 2], [0, 2], [0, 1]]


def test_triplet_by_hand() -> None:
    # n_neg=1: only the hardest negative; with B=2 that is the other row. margin 0.5, sim = [[1, R], [0, R]]:
    # pair 0: a-side max(0, .5 - 1 + sim(a1, b0)=0) = 0; b-side max(0, .5 - 1 + sim(a0, b1)=R) = R - .5
    # pair 1: a-side max(0, .5 - R + sim(a0, b1)=R) = .5;   b-side max(0, .5 - R + sim(a1, b0)=0) = 0
    # mean = (R - .5 + .5) / 2 = R / 2
    loss = TripletRankingLoss(n_neg=1, margin=0.5)(A, B, gen())
    assert loss.item() == pytest.approx(R / 2, abs=1e-6)
    # margin 0.2: pair 0 costs 0 + max(0, R - .8) = 0, pair 1 costs .2 + 0; mean .1
    assert TripletRankingLoss(margin=0.2)(A, B, gen()).item() == pytest.approx(0.1, abs=1e-6)


@pytest.mark.parametrize("n_neg", [2, 7])
def test_triplet_with_all_negatives_equals_brute_force(n_neg: int) -> None:
    # B=3: n_neg >= B - 1 uses every other row as a negative, so the loss does not depend on the draw.
    a, b = torch.randn(3, 5, generator=gen(4)), torch.randn(3, 5, generator=gen(5))
    sim, alpha = cosines(a, b), 0.3
    expected = np.mean([sum(max(0.0, alpha - sim[i, i] + sim[j, i]) + max(0.0, alpha - sim[i, i] + sim[i, j])
                            for j in range(3) if j != i) for i in range(3)])
    assert TripletRankingLoss(n_neg=n_neg, margin=alpha)(a, b, gen()).item() == pytest.approx(expected, abs=1e-5)


def test_triplet_uses_the_selected_negatives() -> None:
    # Brute force over the negatives select_negatives draws (a-side from sim^T first, then b-side from sim).
    a, b = torch.randn(8, 6, generator=gen(6)), torch.randn(8, 6, generator=gen(7))
    sim, alpha, g = cosines(a, b), 0.2, gen(8)
    sim_t = torch.from_numpy(sim.T.copy()).float()
    neg_a, neg_b = select_negatives(sim_t, 3, g).tolist(), select_negatives(sim_t.T, 3, g).tolist()
    expected = np.mean([sum(max(0.0, alpha - sim[i, i] + sim[j, i]) for j in neg_a[i])
                        + sum(max(0.0, alpha - sim[i, i] + sim[i, j]) for j in neg_b[i]) for i in range(8)])
    assert TripletRankingLoss(n_neg=3, margin=alpha)(a, b, gen(8)).item() == pytest.approx(expected, abs=1e-5)


def test_triplet_rejects_bad_input() -> None:
    loss = TripletRankingLoss()
    with pytest.raises(ValueError, match=r"\(4, 3\) and \(4, 2\)"):
        loss(torch.zeros(4, 3), torch.zeros(4, 2), gen())
    with pytest.raises(ValueError, match="at least two pairs"):
        loss(torch.ones(1, 3), torch.ones(1, 3), gen())
    with pytest.raises(ValueError, match="n_neg"):
        TripletRankingLoss(n_neg=0)


# --- MultipleNegativesRankingLoss ----------------------------------------------------------------------------


def test_mnrl_by_hand() -> None:
    # scale 1, margin 0, logits = cos = [[1, R], [0, R]]; cross-entropy of row i = log(1 + sum_{j!=i} e^(l_ij - l_ii))
    # a->b rows: log(1 + e^(R-1)), log(1 + e^-R); b->a columns [1, 0] and [R, R]: log(1 + e^-1), log 2
    forward = (math.log(1 + math.exp(R - 1)) + math.log(1 + math.exp(-R))) / 2  # 0.47911
    backward = (math.log(1 + math.exp(-1)) + math.log(2)) / 2  # 0.50320
    one_way = MultipleNegativesRankingLoss(scale=1.0, bidirectional=False)
    assert one_way(A, B).item() == pytest.approx(forward, abs=1e-6)
    both = MultipleNegativesRankingLoss(scale=1.0)
    assert both(A, B).item() == pytest.approx((forward + backward) / 2, abs=1e-6)
    # scale 10, margin 0.1: logits 10 * (cos - 0.1 I) = [[9, 10R], [0, 10R - 1]] (diagonal 9 and 10R - 1)
    # rows: log(1 + e^(10R - 9)), log(1 + e^(0 - (10R - 1)))
    # columns [9, 0] and [10R, 10R - 1]: log(1 + e^-9), log(1 + e^(10R - (10R - 1))) = log(1 + e)
    rows = (math.log(1 + math.exp(10 * R - 9)) + math.log(1 + math.exp(1 - 10 * R))) / 2
    cols = (math.log(1 + math.exp(-9)) + math.log(1 + math.e)) / 2
    loss = MultipleNegativesRankingLoss(scale=10.0, margin=0.1)(A, B)
    assert loss.item() == pytest.approx((rows + cols) / 2, abs=1e-5)


def test_mnrl_equals_brute_force() -> None:
    a, b = torch.randn(6, 4, generator=gen(20)), torch.randn(6, 4, generator=gen(21))
    scale, margin = 5.0, 0.3
    logits = scale * (cosines(a, b) - margin * np.eye(6))

    def xent(m: np.ndarray) -> float:
        return float(np.mean([math.log(sum(math.exp(v) for v in m[i])) - m[i, i] for i in range(len(m))]))

    loss = MultipleNegativesRankingLoss(scale=scale, margin=margin)(a, b)
    assert loss.item() == pytest.approx((xent(logits) + xent(logits.T)) / 2, abs=1e-5)
    one_way = MultipleNegativesRankingLoss(scale=scale, margin=margin, bidirectional=False)(a, b)
    assert one_way.item() == pytest.approx(xent(logits), abs=1e-5)


def test_mnrl_rejects_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match=r"\(3, 4\) and \(2, 4\)"):
        MultipleNegativesRankingLoss()(torch.ones(3, 4), torch.ones(2, 4))


# --- L2ConstrainedSoftmaxLoss / CenterLoss -------------------------------------------------------------------


def test_l2_softmax_by_hand() -> None:
    loss = L2ConstrainedSoftmaxLoss(dim=2, n_classes=2, alpha=2.0)
    with torch.no_grad():
        loss.classifier.weight.copy_(torch.eye(2))
        loss.classifier.bias.copy_(torch.tensor([0.0, 0.4]))
    # u = (3, 4): unit (0.6, 0.8), times alpha 2: (1.2, 1.6); logits (1.2, 1.6 + 0.4) = (1.2, 2.0)
    # label 0: -1.2 + log(e^1.2 + e^2.0) = log(1 + e^0.8) = 1.17110; label 1: log(1 + e^-0.8) = 0.37110
    u = torch.tensor([[3.0, 4.0], [30.0, 40.0]])  # the norm of u does not matter
    assert torch.allclose(loss.logits(u), torch.tensor([[1.2, 2.0], [1.2, 2.0]]))
    expected = (math.log(1 + math.exp(0.8)) + math.log(1 + math.exp(-0.8))) / 2
    assert loss(u, torch.tensor([0, 1])).item() == pytest.approx(expected, abs=1e-6)


def test_l2_softmax_rejects_bad_shapes() -> None:
    loss = L2ConstrainedSoftmaxLoss(dim=3, n_classes=2)
    with pytest.raises(ValueError, match=r"\(batch, 3\).*\(4, 2\)"):
        loss(torch.ones(4, 2), torch.zeros(4, dtype=torch.long))
    with pytest.raises(ValueError, match=r"labels must have shape \(4,\).*\(4, 3\).*\(3,\)"):
        loss(torch.ones(4, 3), torch.zeros(3, dtype=torch.long))


def test_center_loss_by_hand() -> None:
    loss = CenterLoss(n_classes=2, dim=2)
    with torch.no_grad():
        loss.centers.copy_(torch.tensor([[0.0, 0.0], [1.0, 1.0]]))
    u = torch.tensor([[1.0, 2.0], [1.0, 1.0], [3.0, 1.0]], requires_grad=True)
    labels = torch.tensor([0, 1, 1])
    # ||(1,2) - (0,0)||^2 = 5, ||(1,1) - (1,1)||^2 = 0, ||(3,1) - (1,1)||^2 = 4: 1/2 * 9 = 4.5
    value = loss(u, labels)
    assert value.item() == pytest.approx(4.5)
    value.backward()
    # d/dc_0 = -(u_0 - c_0) = (-1, -2); d/dc_1 = -((0, 0) + (2, 0)) = (-2, 0)
    assert loss.centers.grad is not None
    assert torch.equal(loss.centers.grad, torch.tensor([[-1.0, -2.0], [-2.0, 0.0]]))
    mean = CenterLoss(2, 2, reduction="mean")
    mean.load_state_dict(loss.state_dict())
    assert mean(u, labels).item() == pytest.approx(1.5)  # 4.5 / 3


def test_center_loss_init_and_validation() -> None:
    torch.manual_seed(3)
    loss = CenterLoss(4, 5)
    torch.manual_seed(3)
    assert torch.equal(loss.centers, torch.randn(4, 5) * 0.01)
    assert isinstance(loss.centers, nn.Parameter)
    with pytest.raises(ValueError, match="reduction"):
        CenterLoss(4, 5, reduction="max")
    with pytest.raises(ValueError, match=r"\(batch, 5\).*\(2, 4\)"):
        loss(torch.ones(2, 4), torch.zeros(2, dtype=torch.long))


# --- WassersteinCritic ---------------------------------------------------------------------------------------


def linear_critic(**kwargs: float) -> WassersteinCritic:
    lin = nn.Linear(2, 1)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1.0, 2.0]]))
        lin.bias.fill_(0.5)
    return WassersteinCritic(lin, **kwargs)


def test_wasserstein_linear_critic_by_hand() -> None:
    low = torch.tensor([[1.0, 0.0], [0.0, 1.0]])  # d = 1.5, 2.5: mean 2
    high = torch.tensor([[1.0, 1.0], [2.0, 0.0], [1.0, 0.0]])  # d = 3.5, 2.5, 1.5: mean 2.5
    critic = linear_critic()
    assert critic.gap(low, high).item() == pytest.approx(-0.5)
    assert critic(low, high).item() == pytest.approx(-0.5)  # no penalty: forward is the gap
    # a linear critic's gradient is w = (1, 2) everywhere: penalty (sqrt 5 - 1)^2 = 6 - 2 sqrt 5 at any interpolate
    penalised = linear_critic(gradient_penalty=10.0)
    assert penalised.penalty(low, high, gen()).item() == pytest.approx(6 - 2 * math.sqrt(5), abs=1e-6)
    assert penalised(low, high, gen()).item() == pytest.approx(-0.5 + 10 * (6 - 2 * math.sqrt(5)), abs=1e-5)
    with pytest.raises(ValueError, match="Generator"):
        penalised(low, high)


def test_wasserstein_penalty_at_the_drawn_interpolates() -> None:
    # d(x) = ||x||^2 / 2 has gradient x, so the penalty is mean (||x_t|| - 1)^2 at x_t = t low + (1 - t) high.
    class HalfSquare(nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return 0.5 * x.pow(2).sum(dim=1)

    low, high = torch.randn(5, 3, generator=gen(30)), torch.randn(4, 3, generator=gen(31))
    t = torch.rand(4, 1, generator=gen(32)).numpy()  # 4 = min(5, 4) paired rows
    points = t * low[:4].numpy() + (1 - t) * high.numpy()
    expected = np.mean([(np.linalg.norm(p) - 1) ** 2 for p in points])
    assert WassersteinCritic(HalfSquare()).penalty(low, high, gen(32)).item() == pytest.approx(expected, abs=1e-5)


def test_wasserstein_penalty_is_differentiable_in_the_critic() -> None:
    # penalty (||w|| - 1)^2 for a linear critic: d/dw = 2 (||w|| - 1) w / ||w|| = 2 (1 - 1/sqrt 5) (1, 2)
    critic = linear_critic(gradient_penalty=1.0)
    critic.penalty(torch.ones(2, 2), torch.zeros(2, 2), gen()).backward()
    weight = critic.critic.weight
    assert isinstance(weight, torch.Tensor) and weight.grad is not None
    expected = 2 * (1 - 1 / math.sqrt(5)) * torch.tensor([[1.0, 2.0]])
    assert torch.allclose(weight.grad, expected)


def test_wasserstein_clip() -> None:
    critic = linear_critic(clip=0.6)
    critic.clip_()
    state = critic.critic.state_dict()
    assert state["weight"].tolist() == [[pytest.approx(0.6), pytest.approx(0.6)]]
    assert state["bias"].tolist() == [0.5]
    free = linear_critic()
    free.clip_()  # clip == 0: no-op
    assert free.critic.state_dict()["weight"].tolist() == [[1.0, 2.0]]
    with pytest.raises(ValueError, match="clip"):
        WassersteinCritic(nn.Linear(2, 1), clip=-1.0)


def test_wasserstein_rejects_mismatched_dims() -> None:
    with pytest.raises(ValueError, match=r"\(3, 2\) and \(3, 4\)"):
        linear_critic().gap(torch.ones(3, 2), torch.ones(3, 4))


# --- PairDiscriminator / PairDiscriminatorLoss ---------------------------------------------------------------


def test_pair_discriminator_architecture() -> None:
    d = PairDiscriminator(3, 5)
    linears = [m for m in d.modules() if isinstance(m, nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(8, 1024), (1024, 512), (512, 1)]
    slopes = [m.negative_slope for m in d.modules() if isinstance(m, nn.LeakyReLU)]
    assert slopes == [0.2, 0.2]
    assert d(torch.randn(4, 3), torch.randn(4, 5)).shape == (4,)
    with pytest.raises(ValueError, match=r"\(batch, 5\).*\(4, 3\)"):
        d(torch.randn(4, 3), torch.randn(4, 3))
    with pytest.raises(ValueError, match=r"\(4, 3\) and \(2, 5\)"):
        d(torch.randn(4, 3), torch.randn(2, 5))


def single_layer(dim_x: int, dim_y: int, weight: list[float], bias: float) -> PairDiscriminator:
    """A discriminator without hidden layers whose logit is ``weight . concat(x, y) + bias``."""
    d = PairDiscriminator(dim_x, dim_y, hidden=())
    (lin,) = d.net
    assert isinstance(lin, nn.Linear)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([weight]))
        lin.bias.fill_(bias)
    return d


def test_pair_discriminator_concatenates_x_then_y() -> None:
    d = single_layer(1, 2, [1.0, 10.0, 100.0], 0.5)
    # logit = 1 * x + 10 * y_0 + 100 * y_1 + 0.5
    assert d(torch.tensor([[2.0]]), torch.tensor([[3.0, 4.0]])).tolist() == [432.5]


def test_pair_discriminator_loss_by_hand() -> None:
    loss = PairDiscriminatorLoss(single_layer(1, 1, [1.0, 1.0], 0.0))
    # logits x + y = (ln 3, -ln 4): sigmoid = (3/4, 1/5)
    x, y = torch.tensor([[math.log(3)], [-math.log(4)]]), torch.zeros(2, 1)
    # target 1: (-ln 3/4 - ln 1/5) / 2 = ln(20/3) / 2 = 0.94856
    assert loss(x, y, 1.0).item() == pytest.approx(math.log(20 / 3) / 2, abs=1e-6)
    # target 0: (-ln 1/4 - ln 4/5) / 2 = ln 5 / 2 = 0.80472
    assert loss(x, y, 0.0).item() == pytest.approx(math.log(5) / 2, abs=1e-6)
    # target (1, 0): (-ln 3/4 - ln 4/5) / 2 = ln(5/3) / 2 = 0.25541
    assert loss(x, y, torch.tensor([1.0, 0.0])).item() == pytest.approx(math.log(5 / 3) / 2, abs=1e-6)
    assert loss(x, y, torch.tensor(1.0)).item() == pytest.approx(math.log(20 / 3) / 2, abs=1e-6)
    with pytest.raises(ValueError, match=r"\(2,\).*\(3,\)"):
        loss(x, y, torch.ones(3))


# --- CosineDistanceLoss --------------------------------------------------------------------------------------


def test_cosine_distance_by_hand() -> None:
    # cos((1,0), (1,0)) = 1 and cos((0,1), (1,1)) = R: mean(1 - 1, 1 - R) = (1 - R) / 2
    assert CosineDistanceLoss()(A, B).item() == pytest.approx((1 - R) / 2, abs=1e-6)
    # cos((2,0), (-1,0)) = -1: distance 2; opposite rows are the maximum
    assert CosineDistanceLoss()(torch.tensor([[2.0, 0.0]]), torch.tensor([[-1.0, 0.0]])).item() == pytest.approx(2.0)
    with pytest.raises(ValueError, match=r"\(2, 2\) and \(2, 3\)"):
        CosineDistanceLoss()(A, torch.ones(2, 3))


# --- devices -------------------------------------------------------------------------------------------------

DEVICES = ["meta", *(["cuda"] if torch.cuda.is_available() else [])]


@pytest.mark.parametrize("device", DEVICES)
def test_losses_run_on_the_inputs_device(device: str) -> None:
    # Every tensor a loss creates must be on the input's device: a CPU tensor mixed with "meta" (or CUDA) ones
    # raises. The generator stays on the CPU, as the training loop's step generators do.
    dev = torch.device(device)
    a, b = torch.randn(6, 4, device=dev), torch.randn(6, 4, device=dev)
    labels = torch.tensor([0, 1, 2, 0, 1, 2], device=dev)
    results = [
        TripletRankingLoss(n_neg=3, margin=0.2)(a, b, gen()),
        MultipleNegativesRankingLoss(margin=0.3)(a, b),
        L2ConstrainedSoftmaxLoss(4, 3).to(dev)(a, labels),
        CenterLoss(3, 4, reduction="mean").to(dev)(a, labels),
        WassersteinCritic(nn.Linear(4, 1), gradient_penalty=10.0).to(dev)(a, b[:5], gen()),
        PairDiscriminatorLoss(PairDiscriminator(4, 4, hidden=(8,))).to(dev)(a, b, 1.0),
        PairDiscriminatorLoss(PairDiscriminator(4, 4, hidden=(8,))).to(dev)(a, b, torch.ones(6)),
        CosineDistanceLoss()(a, b),
    ]
    assert all(r.shape == () and r.device.type == dev.type and r.dtype == torch.float32 for r in results)


# --- ContrastiveLoss / NPairLoss (EMU's baselines) ---------------------------------------------------------------


def test_contrastive_by_hand() -> None:
    # rows (0, 0), (3, 4), (0, 1), labels 0 0 1, margin 2. Pairs: (0, 1) same, d = 5: 25 / 2;
    # (0, 2) different, d = 1: (2 - 1)^2 / 2 = 1/2; (1, 2) different, d = sqrt 18 > 2: 0. Mean over 3 pairs: 13/3
    u = torch.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]], requires_grad=True)
    loss = ContrastiveLoss(margin=2.0)(u, torch.tensor([0, 0, 1]))
    assert loss.item() == pytest.approx(13 / 3, abs=1e-6)
    loss.backward()
    # d/du_0 = (u_0 - u_1) / 3 - (2 - 1) (u_0 - u_2) / 1 / 3 = (-3, -4) / 3 + (0, 1) / 3 = (-1, -1)
    assert u.grad is not None
    assert torch.allclose(u.grad[0], torch.tensor([-1.0, -1.0]))
    # a larger margin reaches the (1, 2) pair too: (5 - sqrt 18)^2 / 2
    far = ContrastiveLoss(margin=5.0)(u.detach(), torch.tensor([0, 0, 1])).item()
    assert far == pytest.approx((25 / 2 + 16 / 2 + (5 - math.sqrt(18)) ** 2 / 2) / 3, abs=1e-5)


def test_contrastive_equals_brute_force_and_identical_rows_stay_finite() -> None:
    u = torch.randn(7, 4, generator=gen(40))
    labels = torch.tensor([0, 1, 0, 2, 1, 1, 0])
    x, margin = u.double().numpy(), 1.5
    costs = []
    for i in range(7):
        for j in range(i + 1, 7):
            d = float(np.linalg.norm(x[i] - x[j]))
            costs.append(d * d / 2 if labels[i] == labels[j] else max(0.0, margin - d) ** 2 / 2)
    assert ContrastiveLoss(margin)(u, labels).item() == pytest.approx(float(np.mean(costs)), abs=1e-5)
    same = torch.ones(3, 2, requires_grad=True)  # all distances 0: (2 - 0)^2 / 2 for the differently labelled pairs
    value = ContrastiveLoss()(same, torch.tensor([0, 1, 1]))
    assert value.item() == pytest.approx((2 + 2 + 0) / 3)
    value.backward()
    assert same.grad is not None and torch.isfinite(same.grad).all()
    with pytest.raises(ValueError, match="two rows"):
        ContrastiveLoss()(torch.ones(1, 2), torch.tensor([0]))
    with pytest.raises(ValueError, match="margin"):
        ContrastiveLoss(margin=0.0)


def test_npair_by_hand() -> None:
    # rows e1, (R, R), e2, -e1 with labels 0 0 1 2; cos(0,1) = R, cos(0,2) = 0, cos(0,3) = -1, cos(1,2) = R,
    # cos(1,3) = -R. Tuples (anchor 0, positive 1) and (1, 0), negatives {2, 3} for both; scale 2:
    # l(0, 1) = log(1 + e^(2(0 - R)) + e^(2(-1 - R))), l(1, 0) = log(1 + e^(2(R - R)) + e^(2(-R - R)))
    u = torch.tensor([[1.0, 0.0], [R, R], [0.0, 1.0], [-1.0, 0.0]])
    l01 = math.log(1 + math.exp(-2 * R) + math.exp(2 * (-1 - R)))
    l10 = math.log(2 + math.exp(-4 * R))
    assert NPairLoss(scale=2.0)(u, torch.tensor([0, 0, 1, 2])).item() == pytest.approx((l01 + l10) / 2, abs=1e-6)
    # the length of a row does not matter (cosine)
    assert NPairLoss(scale=2.0)(u * torch.tensor([[3.0], [1.0], [7.0], [0.5]]), torch.tensor([0, 0, 1, 2])).item() \
        == pytest.approx((l01 + l10) / 2, abs=1e-6)


def test_npair_equals_brute_force() -> None:
    u = torch.randn(8, 5, generator=gen(41))
    labels = torch.tensor([0, 1, 0, 2, 1, 1, 0, 3])
    cos, scale = cosines(u, u), 3.0
    values = [math.log(1 + sum(math.exp(scale * (cos[a, n] - cos[a, p])) for n in range(8) if labels[n] != labels[a]))
              for a in range(8) for p in range(8) if p != a and labels[p] == labels[a]]
    assert len(values) == 2 * (3 + 3)  # ordered pairs within class 0 (3 rows) and class 1 (3 rows)
    assert NPairLoss(scale)(u, labels).item() == pytest.approx(float(np.mean(values)), abs=1e-5)


def test_npair_without_positives_is_zero_with_a_graph() -> None:
    u = torch.randn(4, 3, generator=gen(42), requires_grad=True)
    value = NPairLoss()(u, torch.tensor([0, 1, 2, 3]))
    assert value.item() == 0.0
    value.backward()
    assert u.grad is not None and not u.grad.any()
    with pytest.raises(ValueError, match=r"labels must have shape \(4,\)"):
        NPairLoss()(u, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="scale"):
        NPairLoss(scale=0.0)


@pytest.mark.parametrize("device", DEVICES)
def test_labelled_batch_losses_run_on_the_inputs_device(device: str) -> None:
    dev = torch.device(device)
    u, labels = torch.randn(6, 4, device=dev), torch.tensor([0, 1, 2, 0, 1, 2], device=dev)
    results = [ContrastiveLoss()(u, labels), NPairLoss(scale=2.0)(u, labels)]
    assert all(r.shape == () and r.device.type == dev.type and r.dtype == torch.float32 for r in results)


def test_ranking_and_distillation_compute_in_float32_under_bf16_autocast() -> None:
    # A bf16 cosine is off by up to ~0.004: 0.4 logits at a ranking scale of 100 (e5's own temperature).
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(32, 384, generator=g), torch.randn(32, 384, generator=g)
    losses = [MultipleNegativesRankingLoss(scale=100.0), lambda x, y: TeacherStudentLoss("cosine")(x, y, y)]
    for loss in losses:
        exact = loss(a, b)
        with torch.autocast("cpu", torch.bfloat16):
            under = loss(a, b)
        assert under.dtype == torch.float32 and under.item() == pytest.approx(exact.item(), rel=1e-5)


def test_teacher_ranking_without_negatives_is_one_directional_in_batch_ranking() -> None:
    g = torch.Generator().manual_seed(0)
    student, teacher = torch.randn(8, 16, generator=g), torch.randn(8, 16, generator=g)
    none = torch.empty(0, 16)
    expected = MultipleNegativesRankingLoss(scale=20.0, bidirectional=False)(student, teacher)
    assert TeacherRankingLoss(scale=20.0)(student, teacher, none).item() == pytest.approx(expected.item(), rel=1e-6)


def test_teacher_ranking_negatives_count_unless_they_repeat_a_target() -> None:
    g = torch.Generator().manual_seed(1)
    student, teacher = torch.randn(4, 16, generator=g, requires_grad=True), torch.randn(4, 16, generator=g)
    loss = TeacherRankingLoss(scale=20.0)
    alone = loss(student, teacher, torch.empty(0, 16))
    other = torch.randn(1, 16, generator=g)
    one = loss(student[:1], teacher[:1], other)
    assert loss(student[:1], teacher[:1], torch.cat([other, 3 * teacher[:1]])).item() == pytest.approx(one.item())
    harder = loss(student, teacher, torch.randn(64, 16, generator=g))
    assert harder.item() > alone.item()
    harder.backward()
    assert student.grad is not None and not teacher.requires_grad
    with pytest.raises(ValueError, match="negatives must have shape"):
        loss(student, teacher, torch.randn(3, 8))


def test_similarity_distillation_pulls_the_students_ranking_of_the_batch_to_the_teachers() -> None:
    g = torch.Generator().manual_seed(0)
    teacher = torch.randn(8, 16, generator=g)
    student = torch.randn(8, 16, generator=g, requires_grad=True)
    loss = SimilarityDistillationLoss(scale=20.0)
    before = loss(student, teacher=teacher)
    before.backward()
    assert student.grad is not None and torch.isfinite(student.grad).all()
    with torch.no_grad():
        moved = student - 0.5 * student.grad
    assert loss(moved, teacher=teacher).item() < before.item()
    rotated = teacher @ torch.linalg.qr(torch.randn(16, 16, generator=g))[0]  # same cosines, other vectors
    assert loss(rotated, teacher=teacher).item() == pytest.approx(0.0, abs=1e-5)
    with torch.autocast("cpu", torch.bfloat16):
        assert loss(student, teacher=teacher).item() == pytest.approx(before.item(), rel=1e-5)
    with pytest.raises(ValueError, match="at least 3 rows"):
        loss(teacher[:2], teacher=teacher[:2])
    with pytest.raises(ValueError, match="same shape"):
        loss(teacher[:4], teacher=teacher)
