"""Training losses shared by the methods, one ``torch.nn.Module`` per loss (as sentence-transformers' ``losses/``).

Every loss takes float32 batches on any device, creates what it needs on the input's device, raises
ValueError on shape mismatches, and returns a scalar (0-dim) tensor.

- :class:`TripletRankingLoss`: bidirectional triplet ranking loss h(a, b) (dual-pivot, paper 004)
- :class:`MultipleNegativesRankingLoss`: in-batch additive-margin softmax (Yang et al. 2019)
- :class:`L2ConstrainedSoftmaxLoss`: softmax over alpha-scaled unit vectors (Ranjan et al. 2017; EMU, paper 002)
- :class:`CenterLoss`: pulls embeddings to learned class centroids (Wen et al. 2016; EMU, paper 002)
- :class:`WassersteinCritic`: WGAN / WGAN-GP critic loss (EMU's language discriminator; dual-pivot)
- :class:`PairDiscriminator` and :class:`PairDiscriminatorLoss`: BCE on pair logits (ABSent, paper 003)
- :class:`CosineDistanceLoss`: mean cosine distance of paired rows (ABSent's f_d, paper 003)
- :class:`TeacherStudentLoss`: student(x) and student(English) onto teacher(English) (Reimers & Gurevych 2020;
  LASER3, Heffernan et al. 2022)
- :class:`TeacherRankingLoss`: student rows ranked against the teacher's vectors of their targets among many
  other teacher vectors
- :class:`SimilarityDistillationLoss`: the teacher's in-batch similarity distributions onto the student's
  (relational distillation: Park et al. 2019; Tung & Mori 2019)
- :class:`ContrastiveLoss`: pairwise contrastive loss over a labelled batch (Chopra et al. 2005; EMU's baseline)
- :class:`NPairLoss`: multi-class N-pair loss on cosines over a labelled batch (Sohn 2016; EMU's baseline)
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext

import torch
import torch.nn.functional as F
from torch import nn

from xlsent.training.networks import mlp

__all__ = [
    "CenterLoss",
    "ContrastiveLoss",
    "CosineDistanceLoss",
    "L2ConstrainedSoftmaxLoss",
    "MultipleNegativesRankingLoss",
    "NPairLoss",
    "PairDiscriminator",
    "PairDiscriminatorLoss",
    "SimilarityDistillationLoss",
    "TeacherRankingLoss",
    "TeacherStudentLoss",
    "TripletRankingLoss",
    "WassersteinCritic",
    "select_negatives",
]

REDUCTIONS = ("sum", "mean")


def _check_matrix(name: str, x: torch.Tensor, dim: int | None = None) -> None:
    if x.dim() != 2 or (dim is not None and x.shape[1] != dim):
        want = f"(batch, {dim})" if dim is not None else "(batch, dim)"
        raise ValueError(f"{name} must have shape {want}, got {tuple(x.shape)}")


def _check_pair(a: torch.Tensor, b: torch.Tensor) -> None:
    """Raise ValueError unless ``a`` and ``b`` are matrices of the same shape (row i of a pairs with row i of b)."""
    if a.dim() != 2 or a.shape != b.shape:
        raise ValueError(f"expected two (batch, dim) tensors of the same shape, got {tuple(a.shape)} and "
                         f"{tuple(b.shape)}")


def _check_labels(u: torch.Tensor, labels: torch.Tensor) -> None:
    if labels.shape != (u.shape[0],):
        raise ValueError(f"labels must have shape ({u.shape[0]},) to match u {tuple(u.shape)}, "
                         f"got {tuple(labels.shape)}")


# --- ranking losses ------------------------------------------------------------------------------------------


def select_negatives(sim: torch.Tensor, n: int, generator: torch.Generator) -> torch.Tensor:
    """Column indices ``(B, n)`` of negatives per row of ``sim`` (diagonal = positives).

    The first is the hardest (most similar) negative; the other ``n - 1`` are drawn at random without
    replacement among the remaining columns. ``n`` is capped at ``B - 1``.

    >>> sim = torch.tensor([[1.0, 0.2, 0.9], [0.5, 1.0, 0.1], [0.3, 0.4, 1.0]])
    >>> select_negatives(sim, 1, torch.Generator().manual_seed(0)).flatten().tolist()
    [2, 0, 1]
    """
    size = sim.shape[0]
    n = min(n, size - 1)
    eye = torch.eye(size, dtype=torch.bool, device=sim.device)
    hardest = sim.detach().masked_fill(eye, float("-inf")).argmax(dim=1, keepdim=True)
    if n == 1:
        return hardest
    keys = torch.rand(size, size, generator=generator, device=generator.device).to(sim.device)
    keys = keys.masked_fill(eye, -1.0).scatter(1, hardest, -1.0)
    return torch.cat([hardest, keys.topk(n - 1, dim=1).indices], dim=1)


class TripletRankingLoss(nn.Module):
    """Bidirectional triplet ranking loss h(a, b) of the dual-pivot paper (004, Sect. 3.3 L_sup = h(y_s, y_t)).

    For each positive pair (a_i, b_i), with cosine similarity sim and margin alpha:

        h_i = sum_{a_n} max(0, alpha - sim(a_i, b_i) + sim(a_n, b_i))
            + sum_{b_n} max(0, alpha - sim(a_i, b_i) + sim(a_i, b_n))

    over ``n_neg`` in-batch negatives per direction (capped at B - 1), of which the first is always the hardest
    and the others are drawn from ``generator`` (:func:`select_negatives`); the loss is the batch mean of h_i.
    Draws a-side negatives first, then b-side ones.

    >>> loss = TripletRankingLoss(n_neg=1, margin=0.5)
    >>> a, b = torch.tensor([[1.0, 0.0], [0.0, 1.0]]), torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    >>> round(loss(a, b, torch.Generator().manual_seed(0)).item(), 4)
    0.3536
    """

    def __init__(self, n_neg: int = 1, margin: float = 0.0) -> None:
        super().__init__()
        if n_neg < 1:
            raise ValueError(f"n_neg must be >= 1, got {n_neg}")
        self.n_neg = n_neg
        self.margin = margin

    def forward(self, a: torch.Tensor, b: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        _check_pair(a, b)
        if len(a) < 2:
            raise ValueError("the triplet loss needs at least two pairs in a batch")
        sim = F.normalize(a, dim=1) @ F.normalize(b, dim=1).T
        pos = sim.diagonal().unsqueeze(1)
        sim_t = sim.T  # sim_t[i, j] = sim(a_j, b_i)
        neg_a = sim_t.gather(1, select_negatives(sim_t, self.n_neg, generator))
        neg_b = sim.gather(1, select_negatives(sim, self.n_neg, generator))
        costs = F.relu(self.margin - pos + neg_a).sum(dim=1) + F.relu(self.margin - pos + neg_b).sum(dim=1)
        return costs.mean()

    def extra_repr(self) -> str:
        return f"n_neg={self.n_neg}, margin={self.margin}"


def no_autocast(device: torch.device) -> AbstractContextManager[object]:
    """A context where autocast is off on ``device`` (nothing to turn off on devices autocast does not know)."""
    return torch.autocast(device.type, enabled=False) if device.type in ("cpu", "cuda") else nullcontext()


def fp32_cosines(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``(len(a), len(b))`` cosine similarities in float32, also under bf16 autocast (a bf16 cosine is off by up to
    ~0.004: 0.4 logits at a ranking scale of 100).

    >>> fp32_cosines(torch.tensor([[1.0, 0.0]], dtype=torch.bfloat16), torch.tensor([[3.0, 4.0]])).tolist()
    [[0.6000000238418579]]
    """
    with no_autocast(a.device):
        return F.normalize(a.float(), dim=1) @ F.normalize(b.float(), dim=1).T


class MultipleNegativesRankingLoss(nn.Module):
    """In-batch softmax cross-entropy with an additive margin on the positives (Yang et al. 2019, IJCAI,
    "Improving multilingual sentence embedding using bi-directional dual encoder with additive margin softmax").

    With phi(a_i, b_j) = scale * (cos(a_i, b_j) - margin * [i == j]) (the margin is in cosine units,
    subtracted before scaling, as in AM-softmax), the a -> b loss is

        L = -1/B sum_i log( exp phi(a_i, b_i) / sum_j exp phi(a_i, b_j) )

    and L' is the same with the roles of a and b swapped. The paper's bidirectional loss is L + L'; this module
    returns their mean (L + L') / 2 when ``bidirectional`` (a factor 2 that keeps the scale of the
    one-directional loss), else L. margin=0, bidirectional=False is sentence-transformers'
    MultipleNegativesRankingLoss with cosine similarity.

    >>> loss = MultipleNegativesRankingLoss(scale=2.0, margin=0.5)
    >>> a = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    >>> round(loss(a, a).item(), 4)  # logits [[1, 0], [0, 1]]: log(1 + e^-1)
    0.3133
    """

    def __init__(self, scale: float = 20.0, margin: float = 0.0, bidirectional: bool = True) -> None:
        super().__init__()
        self.scale = scale
        self.margin = margin
        self.bidirectional = bidirectional

    def forward(self, a: torch.Tensor, b: torch.Tensor, negatives: torch.Tensor | None = None) -> torch.Tensor:
        """The loss of pairs ``(a_i, b_i)``; ``negatives`` (hard negatives, e.g. each pair's nearest
        non-translation) join the candidates of the a -> b direction only, as LaBSE's (the b -> a direction keeps
        the in-batch candidates).

        >>> loss = MultipleNegativesRankingLoss(scale=2.0, bidirectional=False)
        >>> a = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
        >>> round(loss(a, a, negatives=a).item(), 4)  # each row also competes with a copy of itself
        0.8201
        """
        _check_pair(a, b)
        cos = fp32_cosines(a, b)
        eye = torch.eye(len(a), dtype=cos.dtype, device=cos.device)
        logits = self.scale * (cos - self.margin * eye)
        labels = torch.arange(len(a), device=cos.device)
        forward = logits if negatives is None else torch.cat([logits, self.scale * fp32_cosines(a, negatives)], 1)
        loss = F.cross_entropy(forward, labels)
        if self.bidirectional:
            loss = (loss + F.cross_entropy(logits.T, labels)) / 2
        return loss

    def extra_repr(self) -> str:
        return f"scale={self.scale}, margin={self.margin}, bidirectional={self.bidirectional}"


# --- classification losses (EMU) -----------------------------------------------------------------------------


class L2ConstrainedSoftmaxLoss(nn.Module):
    """L2-constrained softmax loss (Ranjan et al. 2017; the EMU paper 002, Sect. "L2-constrained softmax loss").

    Softmax cross-entropy -1/M sum_i log softmax(W^T x_i + b)_{y_i} on x_i = alpha * u_i / ||u_i||, i.e. the
    softmax loss subject to ||x_i|| = alpha, implemented as EMU does: an L2-normalisation layer, a scaling by
    alpha (EMU uses alpha = 50) and a linear output layer with bias (initialised by torch's default, from the
    global RNG).

    >>> _ = torch.manual_seed(0)
    >>> loss = L2ConstrainedSoftmaxLoss(dim=4, n_classes=3)
    >>> u, labels = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])
    >>> tuple(loss.logits(u).shape), loss(u, labels).dim()
    ((5, 3), 0)
    """

    def __init__(self, dim: int, n_classes: int, alpha: float = 50.0) -> None:
        super().__init__()
        if alpha <= 0:
            raise ValueError(f"alpha must be > 0, got {alpha}")
        self.dim = dim
        self.alpha = alpha
        self.classifier = nn.Linear(dim, n_classes)

    def logits(self, u: torch.Tensor) -> torch.Tensor:
        """Class logits ``(batch, n_classes)`` of the embeddings ``u`` ``(batch, dim)``."""
        _check_matrix("u", u, self.dim)
        out: torch.Tensor = self.classifier(self.alpha * F.normalize(u, dim=1))
        return out

    def forward(self, u: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        _check_labels(u, labels)
        return F.cross_entropy(self.logits(u), labels)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class CenterLoss(nn.Module):
    """Center loss L_center = 1/2 sum_i ||u_i - c_{y_i}||^2 (Wen et al. 2016; EMU paper 002, Eq. 1).

    The centroids c are an ``nn.Parameter`` learned by the optimizer with the rest of the model (Wen et al.
    update them with a rule of their own), initialised as ``torch.randn(n_classes, dim) * 0.01`` from the torch
    global RNG, so ``torch.manual_seed`` makes them reproducible. ``reduction="sum"`` is Eq. 1;
    ``reduction="mean"`` divides it by the batch size.

    >>> loss = CenterLoss(n_classes=2, dim=2)
    >>> with torch.no_grad():
    ...     _ = loss.centers.copy_(torch.tensor([[0.0, 0.0], [1.0, 1.0]]))
    >>> loss(torch.tensor([[1.0, 2.0], [3.0, 1.0]]), torch.tensor([0, 1])).item()  # (5 + 4) / 2
    4.5
    """

    def __init__(self, n_classes: int, dim: int, reduction: str = "sum") -> None:
        super().__init__()
        if reduction not in REDUCTIONS:
            raise ValueError(f"reduction must be one of {REDUCTIONS}, not {reduction!r}")
        self.reduction = reduction
        self.centers = nn.Parameter(torch.randn(n_classes, dim) * 0.01)

    def forward(self, u: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        _check_matrix("u", u, self.centers.shape[1])
        _check_labels(u, labels)
        loss = 0.5 * (u - self.centers[labels]).pow(2).sum()
        return loss / len(u) if self.reduction == "mean" else loss

    def extra_repr(self) -> str:
        return f"n_classes={self.centers.shape[0]}, dim={self.centers.shape[1]}, reduction={self.reduction!r}"


# --- adversarial losses --------------------------------------------------------------------------------------


class WassersteinCritic(nn.Module):
    """The loss of a Wasserstein critic d (WGAN, Arjovsky et al. 2017; WGAN-GP, Gulrajani et al. 2017).

    ``gap(low, high) = mean d(low) - mean d(high)``: the critic minimises it (scores ``low`` rows low and
    ``high`` rows high), the generator maximises it (dual-pivot's L_disc = d(y_s) - d(y_t), L_adv = -L_disc).
    ``forward`` is the critic's loss: the gap, plus ``gradient_penalty`` times the WGAN-GP term
    mean_i (||grad d(x_i)|| - 1)^2 at x_i = t_i low_i + (1 - t_i) high_i, t_i ~ U(0, 1) drawn from
    ``generator`` (over the first min(len(low), len(high)) paired rows). ``clip_()`` clamps the critic's
    weights to [-clip, clip] after each critic update (WGAN's Lipschitz constraint; a no-op when clip == 0).
    EMU (paper 002) uses clip = 0.01; dual-pivot (paper 004) uses gradient_penalty = 10.

    >>> critic = WassersteinCritic(nn.Linear(2, 1, bias=False), clip=0.5)
    >>> with torch.no_grad():
    ...     _ = critic.critic.weight.copy_(torch.tensor([[1.0, 2.0]]))
    >>> critic.gap(torch.tensor([[1.0, 0.0]]), torch.tensor([[0.0, 1.0]])).item()  # 1 - 2
    -1.0
    >>> critic.clip_()
    >>> critic.critic.weight.tolist()
    [[0.5, 0.5]]
    """

    def __init__(self, critic: nn.Module, clip: float = 0.0, gradient_penalty: float = 0.0) -> None:
        super().__init__()
        if clip < 0 or gradient_penalty < 0:
            raise ValueError(f"clip and gradient_penalty must be >= 0, got {clip} and {gradient_penalty}")
        self.critic = critic
        self.clip = clip
        self.gradient_penalty = gradient_penalty

    @staticmethod
    def _check(low: torch.Tensor, high: torch.Tensor) -> None:
        if low.dim() != 2 or low.shape[1:] != high.shape[1:]:
            raise ValueError(f"expected two (rows, dim) tensors of the same dim, got {tuple(low.shape)} and "
                             f"{tuple(high.shape)}")

    def gap(self, low: torch.Tensor, high: torch.Tensor) -> torch.Tensor:
        """``mean d(low) - mean d(high)``."""
        self._check(low, high)
        gap: torch.Tensor = self.critic(low).mean() - self.critic(high).mean()
        return gap

    def penalty(self, low: torch.Tensor, high: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        """The WGAN-GP term ``mean (||grad d(x)|| - 1)^2`` at random points between paired rows (differentiable)."""
        self._check(low, high)
        rows = min(len(low), len(high))
        t = torch.rand(rows, 1, generator=generator, dtype=low.dtype, device=generator.device).to(low.device)
        x = (t * low[:rows] + (1 - t) * high[:rows]).requires_grad_(True)
        (grad,) = torch.autograd.grad(self.critic(x).sum(), x, create_graph=True)
        return (grad.norm(dim=1) - 1).pow(2).mean()

    def forward(self, low: torch.Tensor, high: torch.Tensor,
                generator: torch.Generator | None = None) -> torch.Tensor:
        loss = self.gap(low, high)
        if self.gradient_penalty > 0:
            if generator is None:
                raise ValueError("the gradient penalty draws interpolation points: pass a torch.Generator")
            loss = loss + self.gradient_penalty * self.penalty(low, high, generator)
        return loss

    @torch.no_grad()
    def clip_(self) -> None:
        """Clamp every critic parameter to ``[-clip, clip]`` in place (nothing when ``clip == 0``)."""
        if self.clip > 0:
            for p in self.critic.parameters():
                p.clamp_(-self.clip, self.clip)

    def extra_repr(self) -> str:
        return f"clip={self.clip}, gradient_penalty={self.gradient_penalty}"


class PairDiscriminator(nn.Module):
    """MLP scoring pairs: one logit per row of ``concat(x, y)`` (ABSent paper 003, Sect. 4.1 D_real / D_dom).

    Linear layers ``dim_x + dim_y -> hidden[0] -> ... -> hidden[-1] -> 1`` with LeakyReLU(``negative_slope``)
    after each hidden layer. ABSent describes "three fully connected layers of sizes 512, 1024, 512 with
    concatenation", LeakyReLU(0.2) and a sigmoid output; the default ``hidden=(1024, 512)`` reads that as three
    linear layers. It returns logits, not probabilities: :class:`PairDiscriminatorLoss` applies BCE with logits,
    which equals the sigmoid followed by binary cross-entropy (and is numerically stabler).

    >>> _ = torch.manual_seed(0)
    >>> d = PairDiscriminator(3, 2, hidden=(8, 4))
    >>> tuple(d(torch.randn(5, 3), torch.randn(5, 2)).shape)
    (5,)
    """

    def __init__(self, dim_x: int, dim_y: int, hidden: Sequence[int] = (1024, 512),
                 negative_slope: float = 0.2) -> None:
        super().__init__()
        self.dim_x, self.dim_y = dim_x, dim_y
        self.net = mlp(dim_x + dim_y, hidden, 1, activation=lambda: nn.LeakyReLU(negative_slope))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch,)`` of the pairs ``(x_i, y_i)``."""
        _check_matrix("x", x, self.dim_x)
        _check_matrix("y", y, self.dim_y)
        if len(x) != len(y):
            raise ValueError(f"x and y must have the same number of rows, got {tuple(x.shape)} and {tuple(y.shape)}")
        out: torch.Tensor = self.net(torch.cat([x, y], dim=1)).squeeze(1)
        return out


class PairDiscriminatorLoss(nn.Module):
    """Binary cross-entropy of a pair discriminator's logits against ``target`` (1 = real pair, 0 = fake or
    mismatched; ABSent paper 003, Eqs. 2-4, e.g. log D_real(x, y) + log(1 - D_real(x, G_X(x)))).

    ``forward(x, y, target)`` = mean_i BCE(sigmoid(d(x_i, y_i)), target_i), with ``target`` a float for the
    whole batch or a tensor ``(batch,)``. The discriminator maps ``(x, y)`` to logits ``(batch,)``.

    >>> d = PairDiscriminator(1, 1, hidden=())
    >>> with torch.no_grad():
    ...     _ = d.net[0].weight.fill_(1.0), d.net[0].bias.zero_()
    >>> loss = PairDiscriminatorLoss(d)
    >>> round(loss(torch.zeros(4, 1), torch.zeros(4, 1), 1.0).item(), 4)  # logit 0: -log sigmoid(0) = log 2
    0.6931
    """

    def __init__(self, discriminator: nn.Module) -> None:
        super().__init__()
        self.discriminator = discriminator

    def forward(self, x: torch.Tensor, y: torch.Tensor, target: float | torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.discriminator(x, y)
        if isinstance(target, torch.Tensor):
            if target.shape not in ((), logits.shape):
                raise ValueError(f"target must be a scalar or have shape {tuple(logits.shape)} like the logits, "
                                 f"got {tuple(target.shape)}")
            goal = target.to(device=logits.device, dtype=logits.dtype).expand_as(logits)
        else:
            goal = torch.full_like(logits, float(target))
        return F.binary_cross_entropy_with_logits(logits, goal)


# --- distances -----------------------------------------------------------------------------------------------


class CosineDistanceLoss(nn.Module):
    """Mean cosine distance ``mean_i (1 - cos(a_i, b_i))`` of paired rows (ABSent's f_d, paper 003 Eq. 6,
    averaged as in its L_d, Eq. 1).

    >>> loss = CosineDistanceLoss()
    >>> loss(torch.tensor([[1.0, 0.0], [0.0, 2.0]]), torch.tensor([[3.0, 0.0], [0.0, -1.0]])).item()  # (0 + 2) / 2
    1.0
    """

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        _check_pair(a, b)
        return (1 - F.cosine_similarity(a, b, dim=1)).mean()


DISTILL_KINDS = ("mse", "cosine")


class TeacherStudentLoss(nn.Module):
    """Multilingual knowledge distillation: ``d(student(x), teacher(en)) + d(student(en), teacher(en))`` for
    translation pairs ``(x, en)``, with ``d`` the mean squared error over all entries (``"mse"``, Reimers & Gurevych
    2020) or the mean cosine distance (``"cosine"``, LASER3). The teacher's rows are targets (no gradient).

    >>> loss = TeacherStudentLoss("mse")
    >>> t = torch.tensor([[1.0, 0.0]])
    >>> loss(torch.tensor([[0.0, 0.0]]), t, t).item()  # (1 + 0) / 2 for x, 0 for en
    0.5
    >>> TeacherStudentLoss("cosine")(torch.tensor([[0.0, 2.0]]), torch.tensor([[3.0, 0.0]]), t).item()
    1.0
    """

    def __init__(self, kind: str = "mse") -> None:
        super().__init__()
        if kind not in DISTILL_KINDS:
            raise ValueError(f"kind must be one of {DISTILL_KINDS}, not {kind!r}")
        self.kind = kind

    def distance(self, student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        _check_pair(student, teacher)
        with no_autocast(student.device):
            student, teacher = student.float(), teacher.float()
            if self.kind == "mse":
                return F.mse_loss(student, teacher)
            return (1 - F.cosine_similarity(student, teacher, dim=1)).mean()

    def forward(self, student_x: torch.Tensor, student_en: torch.Tensor, teacher_en: torch.Tensor) -> torch.Tensor:
        target = teacher_en.detach()
        return self.distance(student_x, target) + self.distance(student_en, target)


class SimilarityDistillationLoss(nn.Module):
    """Relational distillation (Park et al. 2019, "Relational Knowledge Distillation"; Tung & Mori 2019): for each
    row i of a batch, the teacher's softmax over ``scale * cos(t_i, t_j)`` (j != i) is the target of the student's
    softmax over ``scale * cos(s_i, s_j)``, by KL divergence, averaged over rows; each student matrix of ``students``
    (e.g. the x sides and the English sides) is held to the teacher's structure, their losses summed. Pointwise
    distillation holds each vector near the teacher's; this term holds how the batch's sentences rank one another,
    which is what a similarity benchmark reads.

    >>> loss = SimilarityDistillationLoss(scale=10.0)
    >>> t = torch.tensor([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]])
    >>> loss(t, teacher=t).item()  # the same structure
    0.0
    >>> loss(2 * t, t, teacher=t).item()  # lengths do not matter: cosines
    0.0
    >>> loss(t.flip(0), teacher=t).item() > 0
    True
    """

    def __init__(self, scale: float = 100.0) -> None:
        super().__init__()
        self.scale = scale

    def distributions(self, rows: torch.Tensor) -> torch.Tensor:
        """Each row's log-softmax over ``scale`` times its cosines with the other rows (itself left out)."""
        cos = fp32_cosines(rows, rows)
        eye = torch.eye(len(rows), dtype=torch.bool, device=cos.device)
        return F.log_softmax((self.scale * cos).masked_fill(eye, float("-inf")), dim=1).masked_fill(eye, 0.0)

    def forward(self, *students: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
        _check_matrix("teacher", teacher)
        if len(teacher) < 3:
            raise ValueError(f"a similarity structure needs at least 3 rows, not {len(teacher)}")
        target = self.distributions(teacher.detach())
        p_target = target.exp()
        loss = torch.zeros((), device=teacher.device)
        for student in students:
            _check_pair(student, teacher)
            loss = loss + (p_target * (target - self.distributions(student))).sum(1).mean()
        return loss

    def extra_repr(self) -> str:
        return f"scale={self.scale}"


class TeacherRankingLoss(nn.Module):
    """Student rows ranked against fixed teacher vectors: for student row i, softmax cross-entropy over
    ``scale * cos(student_i, t_j)`` with t the teacher's vectors of the batch's targets followed by ``negatives``
    (more teacher vectors, e.g. drawn from the whole corpus), the target being t_i. Teacher vectors cost nothing to
    add, so a student meets far more negatives than its batch holds. A negative equal to row i's own target
    (cosine above 1 - 1e-4: the same sentence drawn again) is left out of row i's softmax.

    >>> loss = TeacherRankingLoss(scale=1.0)
    >>> t = torch.tensor([[1.0, 0.0]])
    >>> round(loss(t, t, torch.tensor([[0.0, 1.0], [2.0, 0.0]])).item(), 4)  # logits [1, 0]; [1, 0] left out
    0.3133
    """

    def __init__(self, scale: float = 20.0) -> None:
        super().__init__()
        self.scale = scale

    def forward(self, student: torch.Tensor, teacher: torch.Tensor, negatives: torch.Tensor) -> torch.Tensor:
        _check_pair(student, teacher)
        _check_matrix("negatives", negatives, teacher.shape[1])
        targets = torch.cat([teacher, negatives.to(teacher.device)]).detach()
        logits = self.scale * fp32_cosines(student, targets)
        same = fp32_cosines(targets[:len(teacher)], targets[len(teacher):]) > 1 - 1e-4
        logits[:, len(teacher):] = logits[:, len(teacher):].masked_fill(same, float("-inf"))
        return F.cross_entropy(logits, torch.arange(len(student), device=logits.device))

    def extra_repr(self) -> str:
        return f"scale={self.scale}"


# --- metric-learning losses over labelled batches (EMU's baselines, paper 002) ---------------------------------


def _label_masks(u: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(same, eye)``: ``same[i, j]`` when rows i and j share a label; ``eye`` the diagonal (both bool)."""
    _check_labels(u, labels)
    eye = torch.eye(len(u), dtype=torch.bool, device=u.device)
    return labels[:, None] == labels[None, :], eye


class ContrastiveLoss(nn.Module):
    """Contrastive loss over every pair of rows of a labelled batch (Chopra, Hadsell & LeCun 2005, in the form of
    Hadsell, Chopra & LeCun 2006; EMU's baseline, paper 002 Sect. "Baselines", with margin m = 2).

    A Siamese set-up: both rows of a pair come from the same encoder. With the Euclidean distance
    d_ij = ||u_i - u_j|| and y_ij = 1 when rows i and j have the same label, 0 otherwise:

        L = 1/P sum_{i<j} 1/2 [ y_ij d_ij^2 + (1 - y_ij) max(0, m - d_ij)^2 ]

    over the P = B(B-1)/2 pairs of the batch: same-label rows are pulled together, the others pushed at least
    m apart.

    >>> u = torch.tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]])
    >>> round(ContrastiveLoss(margin=2.0)(u, torch.tensor([0, 0, 1])).item(), 4)  # (25/2 + 1/2 + 0) / 3
    4.3333
    """

    def __init__(self, margin: float = 2.0) -> None:
        super().__init__()
        if margin <= 0:
            raise ValueError(f"margin must be > 0, got {margin}")
        self.margin = margin

    def forward(self, u: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        _check_matrix("u", u)
        same, _ = _label_masks(u, labels)
        if len(u) < 2:
            raise ValueError("the contrastive loss needs at least two rows in a batch")
        sq = (u[:, None, :] - u[None, :, :]).pow(2).sum(dim=-1)
        dist = sq.clamp_min(1e-12).sqrt()  # finite gradient for identical rows
        costs = torch.where(same, sq, F.relu(self.margin - dist).pow(2)) / 2
        return costs.triu(diagonal=1).sum() / (len(u) * (len(u) - 1) / 2)

    def extra_repr(self) -> str:
        return f"margin={self.margin}"


class NPairLoss(nn.Module):
    """Multi-class N-pair loss on cosine similarities over a labelled batch (Sohn 2016, "Improved deep metric
    learning with multi-class N-pair loss objective"; EMU's "N-pair sampling cosine loss" baseline, paper 002).

    Every ordered pair (a, p), a != p, of rows with the same label is one tuple of an anchor, its positive and
    the N - 1 negatives n in N(a) (the rows whose label differs from a's). With cos the cosine similarity and
    ``scale`` s:

        l(a, p) = log(1 + sum_{n in N(a)} exp(s cos(u_a, u_n) - s cos(u_a, u_p)))

    i.e. softmax cross-entropy picking the positive among itself and the negatives; the loss is the mean of l
    over all such tuples in the batch (0 when no two rows share a label). Sohn samples one positive per anchor;
    here every positive of the batch is used, so the loss needs no random draw.

    >>> u = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> round(NPairLoss()(u, torch.tensor([0, 0, 1])).item(), 4)  # two tuples, each log(1 + e^(0 - 1))
    0.3133
    """

    def __init__(self, scale: float = 1.0) -> None:
        super().__init__()
        if scale <= 0:
            raise ValueError(f"scale must be > 0, got {scale}")
        self.scale = scale

    def forward(self, u: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
        _check_matrix("u", u)
        same, eye = _label_masks(u, labels)
        positives = (same & ~eye).to(u.dtype)
        cos = self.scale * (F.normalize(u, dim=1) @ F.normalize(u, dim=1).T)
        # diff[a, p, n] = s cos(a, n) - s cos(a, p), kept only for the negatives n of a
        diff = (cos[:, None, :] - cos[:, :, None]).masked_fill(same[:, None, :], float("-inf"))
        zero = torch.zeros(*diff.shape[:2], 1, dtype=diff.dtype, device=diff.device)
        tuples = torch.logsumexp(torch.cat([zero, diff], dim=2), dim=2)  # log(1 + sum_n exp(...))
        return (tuples * positives).sum() / positives.sum().clamp_min(1.0)

    def extra_repr(self) -> str:
        return f"scale={self.scale}"
