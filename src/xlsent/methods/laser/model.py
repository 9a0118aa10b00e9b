"""LASER (paper 001): a BiLSTM sentence encoder trained as the encoder of a many-to-two translation model.

``xlsent train laser`` assembles the corpus (:mod:`xlsent.methods.laser.data`), trains the joint SentencePiece
vocabulary (:mod:`xlsent.methods.laser.vocab`), then trains encoder and decoder together:

- encoder (:class:`~xlsent.encoders.bilstm.BiLstmSentenceEncoder`): subword embeddings, a stacked BiLSTM,
  max-pooling over time; no language tag;
- decoder (:class:`LaserDecoder`): one LSTM layer whose initial hidden state is a linear transform of the
  sentence embedding; at every step its input is the previous target token's embedding, the sentence embedding
  and an embedding of the target language's id; a linear layer and softmax over the vocabulary;
- cross-entropy of the target sentence, Adam, dropout; batches under a padded-token budget, bucketed by length,
  one language pair per batch, the pairs taking turns (:class:`~xlsent.training.batching.TokenBudgetBatches`).

Validation (``eval_every``): similarity-search error (xsim, the paper's multilingual similarity search) of each
trained language against English on the first ``valid_pairs`` Multi30k val captions (de, fr, cs), which training
never sees (newstest2012, LASER's own set, is the gold of the BUCC-style evaluation sets, so it is not used); with
``dev_mining``, also F1 of mining the BUCC-style dev sets (:func:`xlsent.data.bucc.newstest_bucc_dev`, gold pairs
left out of the corpus) of the trained languages that have one.
``minutes`` > 0 ends training after that much time (the depth ablation compares models at equal time). The
decoder is dropped at the end: the model directory holds the vocabulary, the encoder (float16) and the manifest.

>>> from xlsent.training.method import get_method                   # doctest: +SKIP
>>> cfg = get_method("laser").config(["src/xlsent/configs/laser-small.toml"])  # doctest: +SKIP
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from safetensors.torch import save_file
from torch import nn

from xlsent.atomic import atomic_open, atomic_path, write_json
from xlsent.checksum import sha256_file
from xlsent.data.bitext import MULTI30K
from xlsent.data.bucc import DEV_YEARS, newstest_bucc_dev
from xlsent.data.parallel import load_multi30k
from xlsent.data.user_bitext import UserBitext, check_unchanged, load_user_bitext, shipped_without
from xlsent.encoders.base import Encoder, l2_normalize
from xlsent.encoders.batching import token_budget_batches
from xlsent.encoders.bilstm import (
    BATCHING,
    BOS_ID,
    ENCODER_FILE,
    EOS_ID,
    PAD_ID,
    SPM_FILE,
    UNK_ID,
    BiLstmSentenceEncoder,
    LaserEncoder,
    pad_batch,
)
from xlsent.encoders.cache import cached_encode, encoder_id
from xlsent.encoders.registry import load_encoder
from xlsent.encoders.transformer import TransformerEncoder
from xlsent.methods.laser.config import DEFAULTS, DTYPES, NAME, LaserConfig, loss_terms
from xlsent.methods.laser.data import PairCorpus, build_corpus, corpus_counts
from xlsent.methods.laser.vocab import covering_chars, teacher_embeddings, train_vocab
from xlsent.mining.threshold_search import gold_positions, mine_and_score
from xlsent.training.checkpoint import TrainState, latest_checkpoint
from xlsent.training.config import to_toml
from xlsent.training.loop import Trainer, held_out_validation, resolve_device
from xlsent.training.losses import MultipleNegativesRankingLoss, TeacherRankingLoss, TeacherStudentLoss
from xlsent.training.method import Method, begin_training, checked_train, write_trained_manifest
from xlsent.training.record import DataRecord, ObjectiveRecord, TeacherRecord, TrainingRecord, ValidationRecord
from xlsent.training.run_folder import CHECKPOINT_DIR
from xlsent.training.toy import TOY_DE, TOY_EN

log = logging.getLogger(__name__)

CRITERIA = {"xsim": "xsim error % on Multi30k val (lower is better)",
            "mining": "mean F1 % of mining the BUCC-style newstest dev sets (higher is better)"}
"""Validation criterion -> its description in the model card."""
CONFIG_FILE = "config.toml"
COUNTS_FILE = "data.json"
VALID_SPLIT = "val"


class LaserDecoder(nn.Module):
    """Predicts the target sentence from the sentence embedding and the target language's id (teacher forcing)."""

    def __init__(self, vocab_size: int, sentence_dim: int, n_langs: int, *, embed_dim: int = 320,
                 hidden: int = 2048, lang_dim: int = 32, dropout: float = 0.1) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)
        self.lang = nn.Embedding(n_langs, lang_dim)
        self.init_hidden = nn.Linear(sentence_dim, hidden)
        self.lstm = nn.LSTM(embed_dim + sentence_dim + lang_dim, hidden, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(hidden, vocab_size)

    def forward(self, sentence: torch.Tensor, lang: torch.Tensor, prev: torch.Tensor) -> torch.Tensor:
        """Logits ``(batch, time, vocab)`` of the next token after each of ``prev`` ``(batch, time)``."""
        steps = prev.shape[1]
        context = torch.cat([sentence, self.lang(lang)], dim=-1).unsqueeze(1).expand(-1, steps, -1)
        x = torch.cat([self.dropout(self.embed(prev)), context], dim=-1)
        h0 = self.init_hidden(sentence).unsqueeze(0)
        states, _ = self.lstm(x, (h0, torch.zeros_like(h0)))
        return self.out(self.dropout(states))


@dataclass(frozen=True)
class TokenizedPair:
    """One language pair as token ids: sources end with EOS, targets are BOS ... EOS; ``rows``: the pairs of the
    corpus they come from."""

    name: str
    target: int
    src: list[list[int]]
    tgt: list[list[int]]
    rows: list[int]

    @property
    def lengths(self) -> list[int]:
        return [max(len(s), len(t)) for s, t in zip(self.src, self.tgt, strict=True)]


def tokenize_corpus(sp: Any, corpus: Sequence[PairCorpus], targets: Sequence[str], max_len: int
                    ) -> tuple[list[TokenizedPair], dict[str, int]]:
    """Token ids of every pair; pairs with a side longer than ``max_len`` tokens are left out (counted)."""
    out, dropped = [], {}
    for c in corpus:
        src = [ids + [EOS_ID] for ids in sp.encode(c.src)]
        tgt = [[BOS_ID, *ids, EOS_ID] for ids in sp.encode(c.tgt)]
        keep = [i for i in range(len(src)) if len(src[i]) <= max_len and len(tgt[i]) <= max_len]
        dropped[c.name] = len(src) - len(keep)
        if keep:
            out.append(TokenizedPair(c.name, targets.index(c.tgt_lang), [src[i] for i in keep],
                                     [tgt[i] for i in keep], keep))
    if any(dropped.values()):
        log.info("pairs with a side over max_sentence_tokens=%d left out: %s", max_len,
                 {k: v for k, v in dropped.items() if v})
    return out, dropped


@dataclass(frozen=True)
class ValidSet:
    """Multi30k validation captions of one language and their English translations, as token ids."""

    lang: str
    src: list[list[int]]
    eng: list[list[int]]


def validation_sets(sp: Any, languages: Sequence[str], n: int, root: str | Path | None) -> list[ValidSet]:
    """The first ``n`` Multi30k val captions (never trained on) of every training language that has them (none for
    ``n = 0``)."""
    out = []
    for lang in languages if n > 0 else ():
        if lang != "en" and lang in MULTI30K:
            xs, ens = load_multi30k(lang, "en", split=VALID_SPLIT, root=root)
            out.append(ValidSet(lang, [ids + [EOS_ID] for ids in sp.encode(xs[:n])],
                                [ids + [EOS_ID] for ids in sp.encode(ens[:n])]))
    return out


def embed_ids(encoder: BiLstmSentenceEncoder, ids: Sequence[list[int]], device: torch.device) -> np.ndarray:
    """Unit sentence embeddings of token-id lists (row i for list i), without gradients, batched as the fp32
    encoder batches them."""
    out = np.zeros((len(ids), encoder.dim), dtype=np.float32)
    batch_tokens, ratio = BATCHING["torch"]
    with torch.no_grad():
        for batch in token_budget_batches([len(s) for s in ids], batch_tokens, max_ratio=ratio):
            tokens, lengths = pad_batch([ids[i] for i in batch])
            out[batch] = encoder(tokens.to(device), lengths).float().cpu().numpy()
    return l2_normalize(out)


def xsim_error(a: np.ndarray, b: np.ndarray) -> float:
    """Percentage of rows of ``a`` whose nearest row of ``b`` (cosine) is not the same index.

    >>> import numpy as np
    >>> xsim_error(np.eye(3, dtype=np.float32), np.eye(3, dtype=np.float32)[[0, 2, 1]])
    66.66666666666666
    """
    return 100.0 * float(np.mean((a @ b.T).argmax(axis=1) != np.arange(len(a))))


@dataclass(frozen=True)
class DevMiningSet:
    """A BUCC-style dev set of one language as token ids, and its gold pairs as (source row, English row)."""

    lang: str
    src: list[list[int]]
    eng: list[list[int]]
    gold: set[tuple[int, int]]


def dev_mining_sets(sp: Any, languages: Sequence[str], root: str | Path | None) -> list[DevMiningSet]:
    """The BUCC-style dev set (:func:`~xlsent.data.bucc.newstest_bucc_dev`) of every training language that has
    one."""
    out = []
    for lang in dict.fromkeys(languages):
        if lang in DEV_YEARS:
            bucc = newstest_bucc_dev(lang, root)
            out.append(DevMiningSet(lang, [ids + [EOS_ID] for ids in sp.encode(bucc.src)],
                                    [ids + [EOS_ID] for ids in sp.encode(bucc.tgt)], gold_positions(bucc)))
    return out


@dataclass(frozen=True)
class HeldOut:
    """What validation scores: Multi30k xsim sets and BUCC-style dev sets (either may be empty)."""

    xsim: list[ValidSet]
    mining: list[DevMiningSet]


def held_out_scores(encoder: BiLstmSentenceEncoder, device: torch.device, held_out: HeldOut) -> dict[str, float]:
    """xsim error (%) of every Multi30k language against English and their mean (``xsim``); F1 (%) of mining every
    dev set (ratio margin, k = 4, threshold optimised on its gold) and their mean (``mining``)."""
    out: dict[str, float] = {}
    if held_out.xsim:
        errors = {f"xsim/{s.lang}": xsim_error(embed_ids(encoder, s.src, device), embed_ids(encoder, s.eng, device))
                  for s in held_out.xsim}
        out |= {"xsim": float(np.mean(list(errors.values()))), **errors}
    if held_out.mining:
        f1 = {f"mining/{s.lang}": mine_and_score(embed_ids(encoder, s.src, device), embed_ids(encoder, s.eng, device),
                                                 s.gold)["f1"]
              for s in held_out.mining}
        out |= {"mining": float(np.mean(list(f1.values()))), **f1}
    return out


def corpus_sentences(corpus: Sequence[PairCorpus]) -> dict[str, list[str]]:
    """Every sentence of the corpus by language (both sides of every pair)."""
    out: dict[str, list[str]] = {}
    for c in corpus:
        out.setdefault(c.src_lang, []).extend(c.src)
        out.setdefault(c.tgt_lang, []).extend(c.tgt)
    return out


def english_side(pair: PairCorpus) -> int:
    """0 when the source side is English, 1 when the target side is, -1 when neither."""
    return 0 if pair.src_lang == "en" else 1 if pair.tgt_lang == "en" else -1


def teacher_targets(teacher: Encoder, corpus: Sequence[PairCorpus], pairs: Sequence[TokenizedPair], *,
                    progress: bool = True, apart: frozenset[str] = frozenset()) -> dict[str, torch.Tensor]:
    """Per pair with an English side, the teacher's vectors of the English sentences of its kept rows (row i for
    ``pair.src[i]``). Each distinct sentence of the pairs is encoded once, cached on disk by the teacher's id and the
    sentences' checksum, resumable; the pairs named in ``apart`` (a user's) are encoded and cached on their own, so
    adding one leaves the cache of the others valid."""
    by_name = {c.name: c for c in corpus}
    english = {p.name: [(by_name[p.name].src, by_name[p.name].tgt)[english_side(by_name[p.name])][r] for r in p.rows]
               for p in pairs if english_side(by_name[p.name]) >= 0}
    if not english:
        raise ValueError("objective distill/both needs pairs with an English side; the corpus has none")
    groups = [[n for n in english if n not in apart], *([n] for n in english if n in apart)]
    out: dict[str, torch.Tensor] = {}
    for names in (g for g in groups if g):
        sentences = [s for n in names for s in english[n]]
        distinct = list(dict.fromkeys(sentences))
        log.info("teacher %s: vectors of %d distinct English sentences of %d (cached)", teacher.name, len(distinct),
                 len(sentences))
        where = {sentence: i for i, sentence in enumerate(distinct)}
        vectors = cached_encode(teacher, distinct, "en", progress=progress)
        for n in names:
            out[n] = torch.from_numpy(np.ascontiguousarray(vectors[[where[s] for s in english[n]]]))
    return out


def load_teacher(config: LaserConfig) -> Encoder | None:
    """The ``teacher`` where the config distills or starts its embeddings from it (else None), checked to fit
    ``embed_init = "teacher"``."""
    if not config.distills and config.embed_init != "teacher":
        return None
    teacher = load_encoder(config.teacher)
    if config.embed_init == "teacher":
        if not isinstance(teacher, TransformerEncoder):
            raise ValueError(f"embed_init = teacher needs a transformer teacher, not {config.teacher}")
        width = teacher.model.embeddings.word_embeddings.weight.shape[1]
        if width != config.embed_dim:
            raise ValueError(f"embed_init = teacher needs embed_dim = {width} (the teacher's input embeddings), "
                             f"not {config.embed_dim}")
    return teacher


def build_encoder(config: LaserConfig, sp: Any, teacher: Encoder | None) -> BiLstmSentenceEncoder:
    """The student BiLSTM: projected to the teacher's size when it distills and the sizes differ; subword
    embeddings from the teacher's with ``embed_init = "teacher"``, frozen with ``freeze_embeddings``
    (``teacher``: :func:`load_teacher`'s)."""
    out_dim = teacher.dim if config.distills and teacher is not None and teacher.dim != 2 * config.hidden else 0
    encoder = BiLstmSentenceEncoder(sp.get_piece_size(), config.embed_dim, config.hidden, config.layers,
                                    config.dropout, out_dim=out_dim)
    if config.embed_init == "teacher":
        source = teacher or load_teacher(config)
        assert isinstance(source, TransformerEncoder)
        table = source.model.embeddings.word_embeddings.weight.detach()
        unk = source.tokenizer.token_to_id("<unk>")
        specials = {PAD_ID: source.pad, UNK_ID: source.pad if unk is None else unk, BOS_ID: source.bos,
                    EOS_ID: source.eos}
        with torch.no_grad():
            encoder.embed.weight.copy_(teacher_embeddings(sp, source.tokenizer, table, specials))
    if config.freeze_embeddings:
        encoder.embed.weight.requires_grad_(False)
    return encoder


def user_corpus(user: UserBitext) -> list[PairCorpus]:
    """The user's training pairs as corpora into English."""
    return [PairCorpus(b.lang, "en", b.xx, b.en, b.sources) for b in user.bitext]


def user_valid_sets(sp: Any, user: UserBitext) -> list[ValidSet]:
    """The held-out pairs of every user language, as xsim validation sets against their English."""
    return [ValidSet(b.lang, [ids + [EOS_ID] for ids in sp.encode(b.valid_xx)],
                     [ids + [EOS_ID] for ids in sp.encode(b.valid_en)]) for b in user.bitext if b.valid_xx]


def unknown_rates(sp: Any, user: UserBitext) -> dict[str, float]:
    """Per user language, the share (%) of its training text's pieces that the vocabulary does not know."""
    out = {}
    for b in user.bitext:
        pieces = [i for ids in sp.encode(b.xx) for i in ids]
        out[b.lang] = round(100.0 * sum(i == UNK_ID for i in pieces) / max(len(pieces), 1), 3)
    return out


def kept_vocabulary(out: Path) -> bool:
    """Whether ``out`` keeps its vocabulary: only beside a checkpoint, which a resumed run checks against the
    configuration and the vocabulary's checksum (and a run without ``--resume`` is refused); a folder without one
    has its vocabulary trained again, by the configuration given now."""
    checkpoints = out / CHECKPOINT_DIR
    return (out / SPM_FILE).is_file() and checkpoints.is_dir() and latest_checkpoint(checkpoints) is not None


def read_vocabulary(path: Path) -> Any:
    """The SentencePiece model at ``path``; an unreadable one is an error naming it and the fix."""
    import sentencepiece as spm

    try:
        return spm.SentencePieceProcessor(model_file=str(path))
    except (OSError, RuntimeError) as exc:  # SentencePiece reports a corrupt model as RuntimeError
        raise ValueError(f"{path}: not a readable SentencePiece vocabulary ({exc}); delete it and --resume trains "
                         "it again (the checkpoint then checks it is the one the run started with), or train into "
                         "a new --out") from exc


def train_on(config: LaserConfig, corpus: Sequence[PairCorpus], out_dir: str | Path, *, resume: bool = False,
             progress: bool = True, data: str | Path | None = None, user: UserBitext | None = None) -> Path:
    """Train LASER on ``corpus`` and the ``user``'s bitext (its languages' characters always in the vocabulary, its
    held-out pairs validated by xsim) and write the model directory ``out_dir`` (its vocabulary kept only beside a
    checkpoint: :func:`kept_vocabulary`)."""
    from xlsent.training.batching import TokenBudgetBatches

    run = begin_training(out_dir, resume, config)
    if run is None:
        return Path(out_dir)
    out = run.out
    user = user or UserBitext([], [])
    loaded = load_teacher(config)  # before anything is written: a teacher that does not load leaves no --out
    teacher = loaded if config.distills else None
    shipped_langs = [] if config.bitext_only else [x for x in config.languages if x not in user.languages]
    corpus = [*corpus, *user_corpus(user)]
    vocab_path = out / SPM_FILE
    if not kept_vocabulary(out):
        (out / CHECKPOINT_DIR).mkdir(parents=True, exist_ok=True)  # a run killed in or after the vocabulary resumes
        required = covering_chars([s for b in user.bitext for s in b.xx], config.character_coverage,
                                  config.vocab_size // 4)
        train_vocab(corpus_sentences(corpus), vocab_path, vocab_size=config.vocab_size,
                    per_lang=config.vocab_per_lang, model_type=config.vocab_model,
                    character_coverage=config.character_coverage, seed=config.seed, required_chars=required)
    check_unchanged(out, user.records, resume)
    sp = read_vocabulary(vocab_path)
    vocab = sp.get_piece_size()
    pairs, dropped = tokenize_corpus(sp, corpus, config.targets, config.max_sentence_tokens)
    encoder = build_encoder(config, sp, loaded)
    modules: dict[str, nn.Module] = {"encoder": encoder}
    if config.translates:
        modules["decoder"] = LaserDecoder(vocab, encoder.dim, len(config.targets),
                                          embed_dim=config.decoder_embed_dim, hidden=config.decoder_hidden,
                                          lang_dim=config.lang_embed_dim, dropout=config.dropout)
    decoder = modules.get("decoder")
    targets = teacher_targets(teacher, corpus, pairs, progress=progress,
                              apart=frozenset(c.name for c in user_corpus(user))) if teacher is not None else {}
    if not config.translates:
        pairs = [p for p in pairs if p.name in targets]
    params = [q for m in modules.values() for q in m.parameters() if q.requires_grad]
    optimizer = torch.optim.Adam(params, lr=config.lr)
    counts = corpus_counts(corpus)
    meta = {"data": counts, "vocab_sha256": sha256_file(vocab_path)}
    device = resolve_device(config.device)
    held_out = HeldOut(validation_sets(sp, shipped_langs, config.valid_pairs, data) + user_valid_sets(sp, user),
                       dev_mining_sets(sp, shipped_langs, data) if config.dev_mining else []
                       ) if config.eval_every else HeldOut([], [])
    criterion = "mining" if held_out.mining and config.selection != "xsim" else "xsim"
    trainer = Trainer(out, config, TrainState(modules, {"adam": optimizer}),
                      meta=meta, progress=progress,
                      validation=held_out_validation(config, held_out if held_out.xsim or held_out.mining else None,
                                                     partial(held_out_scores, encoder, device), criterion,
                                                     higher_is_better=criterion == "mining"),
                      desc="laser", time_budget_s=60.0 * config.minutes, bar_keys=("loss", "tok/s"))
    batches = TokenBudgetBatches({p.name: p.lengths for p in pairs}, config.max_tokens, seed=config.seed)
    by_name = {p.name: p for p in pairs}
    sides = {c.name: english_side(c) for c in corpus}
    distill = TeacherStudentLoss(config.distill_loss)
    ranking = MultipleNegativesRankingLoss(config.ranking_scale, config.ranking_margin, bidirectional=True)
    teacher_ranking = TeacherRankingLoss(config.ranking_scale)
    bank = torch.cat(list(targets.values())) if config.teacher_ranking_weight > 0 else torch.empty(0)
    tokens_seen = {"src": 0, "tgt": 0}
    clock = {"last": time.perf_counter()}

    def step(s: int) -> dict[str, float]:
        name, rows = batches.batch(s)
        pair = by_name[name]
        src, src_len = pad_batch([pair.src[i] for i in rows])
        sentence = encoder(src.to(device), src_len)
        terms: dict[str, torch.Tensor] = {}
        tgt_tokens = 0
        if decoder is not None:
            tgt, _ = pad_batch([pair.tgt[i] for i in rows])
            tgt = tgt.to(device)
            lang = torch.full((len(rows),), pair.target, dtype=torch.long, device=device)
            logits = decoder(sentence, lang, tgt[:, :-1])
            terms["translate"] = F.cross_entropy(logits.reshape(-1, vocab), tgt[:, 1:].reshape(-1),
                                                 ignore_index=PAD_ID)
            tgt_tokens = int((tgt[:, 1:] != PAD_ID).sum())
        if name in targets:
            other, other_len = pad_batch([pair.tgt[i][1:] for i in rows])  # the target side as encoder input
            other_vec = encoder(other.to(device), other_len)
            x_vec, en_vec = (other_vec, sentence) if sides[name] == 0 else (sentence, other_vec)
            target = targets[name][rows].to(device)
            terms["distill"] = distill(x_vec, en_vec, target)
            if config.ranking_weight > 0:
                terms["ranking"] = ranking(x_vec, en_vec)
            if config.teacher_ranking_weight > 0:
                drawn = torch.Generator().manual_seed(config.seed * 1_000_003 + s)
                negatives = bank[torch.randint(len(bank), (config.teacher_negatives,), generator=drawn)]
                terms["teacher_ranking"] = (teacher_ranking(x_vec, target, negatives)
                                            + teacher_ranking(en_vec, target, negatives)) / 2
            tgt_tokens = int(other_len.sum())
        weights = {"translate": config.translate_weight, "distill": config.distill_weight,
                   "ranking": config.ranking_weight, "teacher_ranking": config.teacher_ranking_weight}
        loss = terms["translate"] if list(terms) == ["translate"] else sum(weights[k] * v for k, v in terms.items())
        assert isinstance(loss, torch.Tensor)
        trainer.update("adam", loss)
        src_tokens = int(src_len.sum())
        tokens_seen["src"] += src_tokens
        tokens_seen["tgt"] += tgt_tokens
        now = time.perf_counter()
        rate, clock["last"] = (src_tokens + tgt_tokens) / max(now - clock["last"], 1e-9), now
        value = loss.item()
        extra = {k: v.item() for k, v in terms.items()} if config.objective != "translate" else {}
        return {"loss": value, f"loss {name}": value, "tok/s": rate, **extra}

    result = trainer.run(step, resume=resume)
    best = trainer.restore_best(["encoder"]) if config.selection != "none" else None
    training = TrainingRecord(
        DataRecord.language_pairs("bitext", {k: v["pairs"] for k, v in counts["per_pair"].items()}, **counts),
        run.seconds(), steps_done=result.steps, train_seconds=round(result.seconds, 1),
        time_budget_minutes=config.minutes, user_bitext=user.records,
        objective=ObjectiveRecord(config.objective, loss_terms(config.objective, asdict(config)),
                                  TeacherRecord(config.teacher, encoder_id(teacher), config.distill_loss)
                                  if teacher is not None else None, config.embed_init),
        validation=ValidationRecord.of_run(
            CRITERIA[criterion], sum(len(s.gold) for s in held_out.mining) if criterion == "mining"
            else sum(len(s.src) for s in held_out.xsim), config.selection, result, restored=best),
        details={"tokens_this_run": tokens_seen, "over_long_pairs_left_out": dropped,
                 "user_unknown_pieces_percent": unknown_rates(sp, user)})
    save_model(out, config, encoder, training)
    trainer.finish()
    log.info("laser model written to %s (%d steps, %.0f s)", out, result.steps, result.seconds)
    return out


def save_model(out: Path, config: LaserConfig, encoder: BiLstmSentenceEncoder, training: TrainingRecord) -> Path:
    """Write the encoder (``save_dtype``), ``config.toml``, the data counts, ``xlsent.json`` and the card."""
    dtype = DTYPES[config.save_dtype]
    with atomic_path(out / ENCODER_FILE) as tmp:
        save_file({k: v.detach().to("cpu", dtype).contiguous() for k, v in encoder.state_dict().items()}, str(tmp))
    with atomic_open(out / CONFIG_FILE) as fh:
        fh.write(to_toml(config))
    user = list(training.user_bitext)
    write_json(out / COUNTS_FILE, {**training.data.details, **({"user_bitext": user} if user else {})})
    arch = {"vocab_size": encoder.embed.num_embeddings, "embed_dim": config.embed_dim, "hidden": config.hidden,
            "layers": config.layers, **({"out_dim": encoder.dim} if encoder.project is not None else {})}
    return write_trained_manifest(
        out, NAME, config, training, name=out.name, architecture=arch, dim=encoder.dim,
        languages={"trained": sorted({*training.data.details["languages"], *config.targets}),
                   "targets": list(config.targets)})


def _train(config: LaserConfig, out: Path, *, resume: bool = False, data: str | Path | None = None,
           progress: bool = True) -> Path:
    """``xlsent train laser``: assemble the corpus from ``data`` (the shipped languages less those of ``--bitext``,
    none with ``bitext_only``), read the user's bitext, and train (see :func:`train_on`)."""
    user = load_user_bitext(config.bitext, hold_out=bool(config.eval_every), seed=config.seed)
    shipped = shipped_without([] if config.bitext_only else config.languages, user)
    corpus = build_corpus(shipped, config.targets, data, max_pairs=config.max_pairs, seed=config.seed,
                          dev_held_out=config.dev_mining) if shipped else []
    return train_on(config, corpus, out, resume=resume, progress=progress, data=data, user=user)


train = checked_train(LaserConfig, _train)



def smallest_model(out: Path, backbone: TransformerEncoder) -> Path:
    """The smallest LASER model: a 1-layer BiLSTM of 8 units, two steps on the toy pairs."""
    cfg = METHOD.config(sets=[
        "vocab_size=40", "vocab_per_lang=500", "embed_dim=8", "hidden=8", "layers=1", "decoder_hidden=8",
        "decoder_embed_dim=8", "lang_embed_dim=4", "max_tokens=200", "max_sentence_tokens=40", "steps=2",
        "eval_every=0", "checkpoint_every=100", "device=cpu", "languages=de", "targets=en", "save_dtype=float32"])
    return train_on(cfg, [PairCorpus("de", "en", TOY_DE * 4, TOY_EN * 4)], out, progress=False)  # type: ignore[arg-type]

METHOD = Method(
    name=NAME,
    summary="LASER (paper 001): BiLSTM encoder + auxiliary decoder trained on parallel data into en/es",
    config_class=LaserConfig, defaults=DEFAULTS, train=train, encoder=LaserEncoder, smallest=smallest_model)
