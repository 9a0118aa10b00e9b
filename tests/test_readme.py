"""README quotes settings, never measured figures: each setting it quotes is written here from the code's own value
(a dataclass default, a constant, a packaged config, a benchmark's option), so a changed default fails this test
until README says the new value; measured figures are pointers to the generated pages."""

from __future__ import annotations

import argparse
import inspect
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from xlsent.align.config import MAX_WEIGHT, MIN_BEADS, MOST_BEADS
from xlsent.encoders.batch_invariance import FP32_TOLERANCE, LOSSY_TOLERANCE
from xlsent.encoders.me5_convert import prepare_default_model
from xlsent.methods.distill import study as distill_study
from xlsent.mining.faiss_index import AUTO_FLAT_MAX_ROWS
from xlsent.mining.precision import BF16_MIN_ROWS
from xlsent.serve.schemas import MAX_SIDE
from xlsent.serve.settings import OPENAI_MAX_INPUTS, ServeSettings
from xlsent.testing import load_script

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "src" / "xlsent" / "configs"


def flat(text: str) -> str:
    """``text`` with every run of whitespace (line breaks included) as one space."""
    return " ".join(text.split())


def bench_defaults(name: str) -> argparse.Namespace:
    """The default options of ``benchmarks/<name>.py`` (its ``build_parser``)."""
    return load_script(ROOT / "benchmarks" / f"{name}.py").build_parser().parse_args([])


def packaged(config: str) -> dict[str, Any]:
    """A method's packaged defaults, ``src/xlsent/configs/<config>.toml``."""
    return tomllib.loads((CONFIGS / f"{config}.toml").read_text(encoding="utf-8"))


def serve_quotes() -> list[str]:
    s = ServeSettings()
    return [f"up to {s.batch_collect_tokens} tokens, or until the oldest has waited {s.max_wait_ms:g} ms",
            f"with {s.inference_threads} micro-batches in flight (`inference_threads`",
            f"a body over {s.max_body_bytes / 2**20:g} MiB (413), a body not sent within {s.body_timeout_s:g} s (408)",
            f"more than {s.max_input_chars:,} characters or {s.max_input_tokens} tokens in one input or "
            f"{s.max_request_tokens:,} tokens in a request (413)",
            f"A request waits at most {s.request_timeout_s:g} s (then 503)",
            f"within a {s.shutdown_grace_s:g} s grace period",
            f"within {s.header_timeout_s:g} s (`header_timeout_s`)",
            f"a string or 1-{OPENAI_MAX_INPUTS} strings", f"(1-{MAX_SIDE} each)"]


def bench_quotes() -> list[str]:
    serve, backends = bench_defaults("serve_bench"), bench_defaults("backend_bench")
    clients = f"{', '.join(map(str, serve.clients[:-1]))} and {serve.clients[-1]}"
    return [f"loads the server with {clients} clients for {serve.seconds:g} s each",
            f"at most {backends.max_loss:g} points below PyTorch fp32"]


def library_quotes() -> list[str]:
    min_cosine = inspect.signature(prepare_default_model).parameters["min_cosine"].default
    return [f"(min cosine >= {min_cosine:g})",
            f"searches exactly below {AUTO_FLAT_MAX_ROWS // 1000}k distinct sentences a side",
            f"both sides have {BF16_MIN_ROWS // 1000}k sentences or more",
            f"(max abs difference <= {short_e(FP32_TOLERANCE)})",
            *bounds(LOSSY_TOLERANCE),
            f"go from 0 to {MAX_WEIGHT:.0f}, `--max-beads` from {MIN_BEADS} to {MOST_BEADS}"]


def filter_quotes() -> list[str]:
    from xlsent.data.noisy_bitext import DEV_PAIRS, build_noisy_bitext
    from xlsent.mining.pair_features import FEATURES
    from xlsent.mining.scorer_training import TRAIN_PAIRS

    clean = inspect.signature(build_noisy_bitext).parameters["clean"].default
    return [f"a LightGBM model over {len(FEATURES)} measurements of the pair",
            f"made from {len(TRAIN_PAIRS)} language pairs", f"{len(DEV_PAIRS)} dev bitexts".replace("6", "six"),
            f"{clean} of them clean"]


def bounds(tolerance: dict[str, float]) -> list[str]:
    """README's statement of the lossy backends' batch-invariance bounds."""
    assert tolerance["torch-bf16"] == tolerance["openvino-bf16"]  # README gives the bf16 backends one bound
    return [f"the bf16 backends hold <= {short_e(tolerance['openvino-bf16'])}",
            f"`openvino-int8` <= {short_e(tolerance['openvino-int8'])}",
            f"`onnx-int8` (one activation scale for the whole batch) <= {short_e(tolerance['onnx-int8'])}"]


def short_e(value: float) -> str:
    """``value`` as README writes a tolerance: ``1e-5``, ``2e-3``."""
    return f"{value:.0e}".replace("e-0", "e-")


def training_quotes() -> list[str]:
    laser, distill, dual_pivot = packaged("laser-small"), packaged("distill"), packaged("dual_pivot")
    d = distill_study
    return [f"chosen on {dual_pivot['valid_pairs']} held-out pairs of the training pair",
            f"--out laser-small-again # {laser['steps']} steps", f"{laser['vocab_size'] // 1000}k pieces",
            f"one BiLSTM layer of 2 x {laser['hidden']}", f"{laser['steps']} steps on 2 cores",
            f"every {laser['eval_every']} steps", f"`distill_weight = {laser['distill_weight']:g}`",
            f"`teacher_negatives` ({laser['teacher_negatives']})",
            f"{distill['steps']} steps of {distill['batch_size']} pairs",
            f"micro-batches of {distill['micro_batch']}",
            f"`stsb_dev_tolerance` ({distill['stsb_dev_tolerance']:g})",
            f"Tatoeba-112 >= {d.TARGET_TATOEBA:g}, no language losing more than {d.MAX_LANGUAGE_LOSS:g} points, "
            f"English STS-B within {d.MAX_STSB_LOSS:g}, and the languages where the default is above {d.STRONG:g} "
            f"within {d.MAX_STSB_LOSS:g} on average"]


@pytest.mark.parametrize("quotes", [serve_quotes, bench_quotes, library_quotes, training_quotes, filter_quotes])
def test_readme_quotes_the_settings_the_code_has(quotes: Any) -> None:
    readme = flat((ROOT / "README.md").read_text(encoding="utf-8"))
    missing = [quote for quote in quotes() if flat(quote) not in readme]
    assert not missing, f"README.md does not say (or no longer says) what the code has: {missing}"


MEASURED = re.compile(r"\d+(?:\.\d+)? ?(?:training )?(?:min|minutes|MB|sentences/s)\b"
                      r"|about \d+ ?(?:s|min|minutes|hours?)\b|quarter of an hour")
"""Figures that only a measurement gives: durations, file sizes, speeds."""


@pytest.mark.parametrize("page", ["README.md", "models/README.md"])
def test_no_hand_typed_measured_figure(page: str) -> None:
    text = flat((ROOT / page).read_text(encoding="utf-8"))
    assert MEASURED.findall(text) == [], f"{page}: point at the generated page (docs/results.md, a model card) instead"
