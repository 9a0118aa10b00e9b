"""The training loop every method runs: device, modes, schedules, clipping, checkpoints, validation, log.

A method supplies its modules and optimizers (:class:`~xlsent.training.checkpoint.TrainState`) and a step
function ``step(s) -> {loss term: value}`` that computes its losses and calls :meth:`Trainer.update` for each
optimizer. The :class:`Trainer` does the rest: moves modules to the device, keeps them in training mode
(dropout on) except during validation, sets scheduled learning rates, clips gradients, checkpoints every
``checkpoint_every`` steps with every RNG state (resume is byte-identical), runs the validation hook every
``eval_every`` steps and keeps the best modules by its criterion, writes ``train.jsonl`` and shows a progress
bar with the loss terms.

>>> import tempfile, torch
>>> from pathlib import Path
>>> from xlsent.training.config import TrainConfig
>>> lin = torch.nn.Linear(2, 1)
>>> opt = torch.optim.Adam(lin.parameters(), lr=0.1)
>>> trainer = Trainer(Path(tempfile.mkdtemp()), TrainConfig(steps=100, device="cpu"),
...                   TrainState({"lin": lin}, {"opt": opt}), progress=False)
>>> def step(s: int) -> dict[str, float]:
...     loss = (lin(torch.ones(1, 2)) - 3).pow(2).sum()
...     trainer.update("opt", loss)
...     return {"loss": loss.item()}
>>> result = trainer.run(step)
>>> result.history[-1]["loss"] < result.history[0]["loss"]
True
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

import torch
from tqdm.auto import tqdm

from xlsent.atomic import atomic_open
from xlsent.encoders.backends import cpu_flags, native_bf16
from xlsent.training.checkpoint import (
    TrainState,
    corrupt,
    latest_checkpoint,
    load_checkpoint,
    read_checkpoint_json,
    read_tensors_json,
    restore_modules,
    rng_state,
    save_checkpoint,
    save_tensors_json,
    set_rng_state,
    state_tensors,
)
from xlsent.training.config import TrainConfig
from xlsent.training.run_folder import CHECKPOINT_DIR, LOG_FILE
from xlsent.training.schedule import apply_schedule, lr_factor, remember_base_lrs

log = logging.getLogger(__name__)

H = TypeVar("H")
M = TypeVar("M")

BEST = "best.json"


def resolve_device(device: str) -> torch.device:
    """``auto`` -> CUDA when available, else CPU; ``cuda`` without a GPU is an error naming the fix."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda: no CUDA device is available here; use --device cpu or auto")
    return torch.device(device)


def resolve_precision(precision: str, device: torch.device, flags: frozenset[str] | None = None) -> str:
    """The precision a run uses: ``bf16`` on a GPU that supports it and on CPUs with native bf16 matrix
    instructions (AMX, AVX512-BF16); elsewhere ``fp32``, with a warning (emulated bf16 is many times slower, and
    the device a run uses is not part of its configuration either).

    >>> cpu = torch.device("cpu")
    >>> resolve_precision("bf16", cpu, frozenset({"amx_bf16"})), resolve_precision("fp32", cpu, frozenset({"amx_bf16"}))
    ('bf16', 'fp32')
    """
    if precision != "bf16":
        return precision
    if device.type == "cuda":
        native = torch.cuda.is_bf16_supported()
    else:
        native = native_bf16(cpu_flags() if flags is None else flags)
    if not native:
        log.warning("precision bf16: this %s has no native bf16 matrix instructions (emulated bf16 took 15x as long "
                    "a step as fp32 on an AVX2 CPU); training in fp32", device.type.upper())
        return "fp32"
    return "bf16"


@dataclass
class Validation:
    """``evaluate()`` -> metrics, run every ``every`` steps; ``criterion`` is the metric that picks the best."""

    evaluate: Callable[[], dict[str, float]]
    criterion: str
    every: int
    higher_is_better: bool = True


def held_out_validation(config: TrainConfig, held_out: H | None, evaluate: Callable[[H], dict[str, float]],
                        criterion: str, *, higher_is_better: bool = True) -> Validation | None:
    """``evaluate(held_out)`` every ``config.eval_every`` steps, ``criterion`` picking the best step; None (no
    validation) without held-out data or with ``eval_every < 1``.

    >>> v = held_out_validation(TrainConfig(eval_every=5), [1, 2], lambda h: {"n": float(len(h))}, "n")
    >>> v.every, v.evaluate(), held_out_validation(TrainConfig(eval_every=5), None, len, "n")
    (5, {'n': 2.0}, None)
    """
    if held_out is None or config.eval_every < 1:
        return None
    return Validation(lambda: evaluate(held_out), criterion, config.eval_every, higher_is_better)


@dataclass
class TrainResult:
    """What a run did: logged means per interval, where it started, and the best validation (if any)."""

    history: list[dict[str, float]]
    start_step: int
    steps: int
    seconds: float
    best: dict[str, Any] | None = None
    validations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def final(self) -> dict[str, float]:
        """The last logged means (empty when no step was logged)."""
        return self.history[-1] if self.history else {}

    @property
    def scores(self) -> list[tuple[int, float]]:
        """``(step, criterion score)`` of every validation, in order."""
        return [(v["step"], float(v["validation"][v["criterion"]])) for v in self.validations]


@dataclass
class FitResult(Generic[M]):
    """What a method's ``fit`` returns: the trained ``model`` (its best validated weights when they were restored),
    the ``run`` and the restored best validation (``best``, None when none was restored)."""

    model: M
    run: TrainResult
    best: dict[str, Any] | None


class Trainer:
    """Runs a method's step function with checkpoints, schedules, validation and a log in ``out_dir``.

    ``scheduled`` names the optimizers whose learning rates follow the config's warm-up and decay (default: all;
    critics usually keep a constant rate). ``time_budget_s`` > 0 ends the run after the first step at which the
    training time (summed over resumed runs, validations included) reaches it: that step is logged, validated
    and checkpointed like a last step, and ``TrainResult.steps`` says where it stopped. A logged term is the mean
    over the steps of the interval that returned it (a term of some steps only, e.g. one language pair's loss,
    averages those); ``bar_keys`` limits the terms the progress bar shows (default: all). ``meta`` (data identity
    and the like) must match on resume, as must the configuration's fingerprint.
    """

    def __init__(self, out_dir: Path, config: TrainConfig, state: TrainState, *, meta: dict[str, Any] | None = None,
                 validation: Validation | None = None, scheduled: Sequence[str] | None = None,
                 progress: bool = True, desc: str = "train", time_budget_s: float = 0.0,
                 bar_keys: Sequence[str] | None = None) -> None:
        self.out_dir = Path(out_dir)
        self.ckpt_dir = self.out_dir / CHECKPOINT_DIR
        self.config = config
        self.state = state
        self.device = resolve_device(config.device)
        self.precision = resolve_precision(config.precision, self.device)
        for module in state.modules.values():
            module.to(self.device)
        for opt in state.optimizers.values():
            remember_base_lrs(opt)
        self.scheduled = list(state.optimizers) if scheduled is None else list(scheduled)
        self.validation = validation
        self.progress = progress
        self.desc = desc
        self.time_budget_s = time_budget_s
        self.bar_keys = None if bar_keys is None else set(bar_keys)
        kept = config.fingerprinted()
        self.meta = json.loads(json.dumps({"fingerprint": config.fingerprint(), "config": kept, **(meta or {})}))
        self.lrs: dict[str, float] = {}

    # --- inside a step -----------------------------------------------------------------------------------

    def update(self, optimizer: str, loss: torch.Tensor, *, retain_graph: bool = False) -> None:
        """Zero the optimizer's gradients, back-propagate ``loss``, clip (``grad_clip``) and step."""
        self.update_with(optimizer, lambda: loss.backward(retain_graph=retain_graph))

    def update_with(self, optimizer: str, backward: Callable[[], object]) -> None:
        """Zero the optimizer's gradients, call ``backward`` (which fills them, e.g. by gradient caching), clip
        (``grad_clip``) and step."""
        opt = self.state.optimizers[optimizer]
        opt.zero_grad(set_to_none=True)
        backward()
        if self.config.grad_clip > 0:
            params = [p for g in opt.param_groups for p in g["params"] if p.grad is not None]
            torch.nn.utils.clip_grad_norm_(params, self.config.grad_clip)
        opt.step()

    # --- the loop ------------------------------------------------------------------------------------------

    def _check_resume(self, ckpt: Path) -> None:
        """Refuse a checkpoint made with another configuration or data (a corrupt one: :func:`corrupt`)."""
        saved = read_checkpoint_json(ckpt).get("meta")
        if not isinstance(saved, dict) or not isinstance(saved.get("config", {}), dict):
            raise corrupt(ckpt, "no meta object of its configuration")
        if saved == self.meta:
            return
        old, new = saved.get("config", {}), self.meta["config"]
        keys = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        what = (f"config keys differ: {', '.join(f'{k} {old.get(k)!r} -> {new.get(k)!r}' for k in keys)}" if keys
                else "the training data or backbone differ")
        raise ValueError(f"{ckpt}: cannot resume, the checkpoint was made with another configuration "
                         f"(fingerprint {saved.get('fingerprint')} vs {self.meta['fingerprint']}; {what}); "
                         "use a new output folder, or train without --resume after removing it")

    def _start(self, resume: bool) -> dict[str, Any]:
        ckpt = latest_checkpoint(self.ckpt_dir) if self.ckpt_dir.is_dir() else None
        if ckpt is not None and not resume:
            raise FileExistsError(f"{self.ckpt_dir} holds checkpoints of an earlier run: resume it with --resume "
                                  "or remove the folder")
        if ckpt is None:
            (self.out_dir / LOG_FILE).unlink(missing_ok=True)
            (self.ckpt_dir / BEST).unlink(missing_ok=True)
            return {"step": 0, "history": [], "pending": {}, "elapsed_s": 0.0, "validations": []}
        self._check_resume(ckpt)
        info = load_checkpoint(ckpt, self.state)
        self._truncate_log(info["step"])
        log.info("resuming from %s (step %d of %d)", ckpt, info["step"], self.config.steps)
        return info

    def _truncate_log(self, step: int) -> None:
        path = self.out_dir / LOG_FILE
        if not path.is_file():
            return
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
        with atomic_open(path) as fh:
            fh.writelines(ln + "\n" for ln in lines if json.loads(ln)["step"] <= step)

    def _log(self, record: dict[str, Any]) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        with open(self.out_dir / LOG_FILE, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record) + "\n")

    def _set_lrs(self, step: int) -> None:
        cfg = self.config
        factor = lr_factor(step, steps=cfg.steps, warmup=cfg.warmup_steps, kind=cfg.schedule)
        for name, opt in self.state.optimizers.items():
            lrs = apply_schedule(opt, factor if name in self.scheduled else 1.0)
            self.lrs.update({f"{name}/{g}" if len(lrs) > 1 else name: v for g, v in lrs.items()})

    def _train_mode(self, on: bool) -> None:
        for module in self.state.modules.values():
            module.train(on)

    def _validate(self, step: int, elapsed: float, best: dict[str, Any] | None
                  ) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """Run the hook (RNG states untouched), log it, and save the modules when the criterion improves."""
        assert self.validation is not None
        rng_tensors, rng_json = rng_state()
        self._train_mode(False)
        with torch.no_grad():
            metrics = self.validation.evaluate()
        self._train_mode(True)
        set_rng_state(rng_tensors, rng_json)
        crit = self.validation.criterion
        if crit not in metrics:
            raise KeyError(f"validation returned {sorted(metrics)}, not the criterion {crit!r}")
        score = float(metrics[crit])
        sign = 1 if self.validation.higher_is_better else -1
        improved = best is None or sign * score > sign * best["score"]
        record = {"step": step, "elapsed_s": round(elapsed, 2), "validation": metrics, "criterion": crit,
                  "best": improved}
        self._log(record)
        if improved:
            tensors, _ = state_tensors(TrainState(self.state.modules))
            save_tensors_json(self.ckpt_dir / BEST, tensors, {"step": step, "criterion": crit, "score": score})
            best = {"step": step, "criterion": crit, "score": score}
        return best, record

    def run(self, step_fn: Callable[[int], dict[str, float]], *, resume: bool = False) -> TrainResult:
        """Call ``step_fn(s)`` for every step not done yet; returns the logged history and the best validation."""
        cfg = self.config
        info = self._start(resume)
        start, history = info["step"], info["history"]
        pending, validations = info["pending"], info["validations"]
        best: dict[str, Any] | None = info.get("best")
        acc: dict[str, float] = pending.get("sums", {})
        counts: dict[str, int] = pending.get("counts", {})
        began = time.perf_counter() - info["elapsed_s"]
        self._train_mode(True)
        bar = tqdm(total=cfg.steps, initial=start, disable=not self.progress, desc=self.desc, unit="step")
        spent = 0 < self.time_budget_s <= time.perf_counter() - began  # a resumed run whose budget was spent
        done = start
        for step in range(start, start if spent else cfg.steps):
            self._set_lrs(step)
            with torch.autocast(self.device.type, torch.bfloat16, enabled=self.precision == "bf16"):
                values = step_fn(step)
            for k, v in values.items():
                acc[k] = acc.get(k, 0.0) + v
                counts[k] = counts.get(k, 0) + 1
            done = step + 1
            last = done == cfg.steps or (self.time_budget_s > 0
                                         and time.perf_counter() - began >= self.time_budget_s)
            if done % cfg.log_every == 0 or last:
                means = {k: v / counts[k] for k, v in acc.items()}
                history.append({"step": done, **means})
                self._log({"step": done, "elapsed_s": round(time.perf_counter() - began, 2), "lr": dict(self.lrs),
                           "losses": means})
                bar.set_postfix({k: f"{v:.4g}" for k, v in means.items()
                                 if self.bar_keys is None or k in self.bar_keys})
                acc, counts = {}, {}
            if self.validation and self.validation.every > 0 and (done % self.validation.every == 0 or last):
                best, record = self._validate(done, time.perf_counter() - began, best)
                validations.append(record)
                bar.set_postfix({"best": f"{best['score']:.4g}@{best['step']}"} if best else {})
            bar.update(1)
            if done % cfg.checkpoint_every == 0 or last:
                save_checkpoint(self.ckpt_dir, done, self.state, {
                    "meta": self.meta, "history": history, "pending": {"sums": acc, "counts": counts},
                    "elapsed_s": time.perf_counter() - began, "best": best, "validations": validations})
            if last:
                break
        bar.close()
        return TrainResult(history, start, done, time.perf_counter() - began, best, validations)

    def restore_best(self, modules: Sequence[str] | None = None) -> dict[str, Any] | None:
        """Load the best validated weights into ``modules`` (default all); None when no validation ran."""
        path = self.ckpt_dir / BEST
        if not path.is_file():
            return None
        tensors, info = read_tensors_json(path)
        names = list(self.state.modules) if modules is None else list(modules)
        restore_modules({n: self.state.modules[n] for n in names}, tensors)
        return {k: info[k] for k in ("step", "criterion", "score")}

    def finish(self) -> None:
        """Remove the checkpoints once the model is written (``train.jsonl`` stays)."""
        shutil.rmtree(self.ckpt_dir, ignore_errors=True)
