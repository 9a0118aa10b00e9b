"""The page at ``/`` in headless Chromium (Debian's, driven by Playwright): type sentences in two languages, align,
see the heatmap with the aligned pairs outlined and their margin scores, and a screenshot of a sensible size."""

from __future__ import annotations

import struct
from pathlib import Path

import httpx
import numpy as np
import pytest

from xlsent.testing import LookupEncoder

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
DE = ["Der Hund bellt.", "Ich trinke gern Kaffee.", "Wo ist der Bahnhof?", "Das Wetter ist schön."]
EN = ["Where is the station?", "The weather is nice.", "The dog barks.", "I like drinking coffee."]
TRANSLATION = {0: 2, 1: 3, 2: 0, 3: 1}

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} is absent: `make setup` installs "
                                "Debian's chromium package")


def planted() -> LookupEncoder:
    rng = np.random.default_rng(3)
    base = rng.standard_normal((4, 24))
    table = {de: base[i] for i, de in enumerate(DE)}
    table.update({EN[j]: base[i] + 0.3 * rng.standard_normal(24) for i, j in TRANSLATION.items()})
    return LookupEncoder(table, name="planted")


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_page_aligns_typed_sentences(serve, tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    with serve({"planted": planted()}) as live, sync_playwright() as pw:
        expected = httpx.post(live.url + "/v1/align", json={"src": DE, "tgt": EN}).json()["pairs"]
        assert {(p["src"], p["tgt"]) for p in expected} == set(TRANSLATION.items())
        browser = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"), executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1100, "height": 900}, timeout=60_000)
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on("requestfailed", lambda request: errors.append(f"failed: {request.url}"))
            outside: list[str] = []
            page.on("request", lambda request: None if request.url.startswith(live.url) else outside.append(
                request.url))
            page.goto(live.url + "/", timeout=30_000)
            page.wait_for_selector("#state.ready", timeout=30_000)
            page.fill("#src", "")
            page.type("#src", "\n".join(DE))
            page.fill("#tgt", "")
            page.type("#tgt", "\n".join(EN))
            page.click("#align")
            page.wait_for_selector("#pairs tbody tr", timeout=30_000)

            cells = page.eval_on_selector_all(
                "#heatmap td.pair", "els => els.map(e => [Number(e.dataset.src), Number(e.dataset.tgt),"
                " e.querySelector('.margin').textContent])")
            assert {(s, t) for s, t, _ in cells} == set(TRANSLATION.items())
            scores = {(p["src"], p["tgt"]): p["score"] for p in expected}
            for s, t, shown in cells:
                assert shown == f"{scores[(s, t)]:.3f}"
            assert page.locator("#heatmap td").count() == 16
            rows = page.eval_on_selector_all("#pairs tbody tr", "els => els.map(e => e.children[1].textContent"
                                             " + ' -> ' + e.children[2].textContent)")
            assert rows == [f"{DE[p['src']]} -> {EN[p['tgt']]}" for p in expected]
            assert "4 pairs from 4 × 4 sentences" in page.text_content("#status")
            assert page.locator("#error").is_hidden()

            shot = page.screenshot(full_page=True, path=str(tmp_path / "page.png"))
            width, height = png_size(shot)
            assert width == 1100 and 600 <= height <= 3000 and len(shot) > 20_000
            assert not errors and not outside, (errors, outside)

            page.fill("#src", "")
            page.click("#align")
            assert "at least one sentence" in page.text_content("#error")
        finally:
            browser.close()
