"""``/v1/align`` in document mode: the beads of ``xlsent align`` on the same lines."""

from __future__ import annotations

import httpx
import numpy as np
import pytest

from xlsent.align.aligner import align_texts
from xlsent.align.config import AlignConfig
from xlsent.serve.inputs import count_tokens
from xlsent.serve.schemas import MAX_SIDE
from xlsent.serve.settings import ServeSettings
from xlsent.testing import LookupEncoder

DE = ["ein Hund", "eine Katze schläft", "ein Vogel", "fremde Zeile", "ein Fisch"]
EN = ["a dog", "a cat", "sleeps", "a bird", "a fish"]


@pytest.fixture(scope="module")
def encoder() -> LookupEncoder:
    rng = np.random.default_rng(3)
    base = {k: rng.standard_normal(16) for k in ("dog", "cat", "bird", "fish", "other")}
    table = {"ein Hund": base["dog"], "a dog": base["dog"] + 0.2 * rng.standard_normal(16),
             "eine Katze schläft": base["cat"], "a cat sleeps": base["cat"] + 0.2 * rng.standard_normal(16),
             "a cat": base["cat"] + 0.9 * rng.standard_normal(16), "sleeps": rng.standard_normal(16),
             "ein Vogel": base["bird"], "a bird": base["bird"] + 0.2 * rng.standard_normal(16),
             "fremde Zeile": base["other"], "ein Fisch": base["fish"],
             "a fish": base["fish"] + 0.2 * rng.standard_normal(16)}
    return LookupEncoder(table, name="doc")


@pytest.fixture(scope="module")
def doc_server(serve, encoder):
    with serve({"doc": encoder}) as live:
        yield live


def test_document_mode_gives_the_beads_of_xlsent_align(doc_server, encoder: LookupEncoder) -> None:
    r = httpx.post(doc_server.url + "/v1/align", json={"src": DE, "tgt": EN, "document": True})
    assert r.status_code == 200, r.text
    body = r.json()
    beads = [(tuple(b["src"]), tuple(b["tgt"])) for b in body["beads"]]
    expected = align_texts(DE, EN, lambda texts, lang: encoder.encode(texts, lang), AlignConfig())
    assert beads == [(b.src, b.tgt) for b in expected]
    assert ((1,), (1, 2)) in beads and ((3,), ()) in beads
    assert body["pairs"] == []


def test_document_mode_makes_an_empty_line_a_null_bead_as_xlsent_align(doc_server, encoder: LookupEncoder) -> None:
    """One definition of empty text (xlsent.data.empty_text.is_empty) and one behaviour in both front ends: a blank
    or invisible line is a null bead of cost 0 of its own, never paired (it was a 400 here, a null bead in the
    command); a side without text is a 400."""
    src, tgt = ["ein Hund", " ", "ein Vogel"], ["a dog", "\u200b\u00ad", "a bird"]
    r = httpx.post(doc_server.url + "/v1/align", json={"src": src, "tgt": tgt, "document": True})
    assert r.status_code == 200, r.text
    beads = [(tuple(b["src"]), tuple(b["tgt"]), b["cost"]) for b in r.json()["beads"]]
    expected = align_texts(src, tgt, lambda texts, lang: encoder.encode(texts, lang), AlignConfig())
    assert beads == [(b.src, b.tgt, pytest.approx(b.cost)) for b in expected]
    assert ((1,), (), 0.0) in beads and ((), (1,), 0.0) in beads
    r = httpx.post(doc_server.url + "/v1/align", json={"src": [" ", "\ufeff"], "tgt": ["a dog"], "document": True})
    assert r.status_code == 400 and r.json()["error"]["code"] == "empty_input"
    assert "src has no text (2 line(s), every one empty or blank)" in r.text


def test_document_mode_splits_paragraphs_and_maps_the_sentences(doc_server) -> None:
    """``split``: the paragraphs become sentences (as ``xlsent align --split``), the beads number them and each maps
    back to its row and span; both languages are needed, and only document mode splits."""
    src, tgt = ["Ein Hund. Ein Vogel.", "Ein Fisch."], ["A dog. A bird. A fish."]
    r = httpx.post(doc_server.url + "/v1/align", json={"src": src, "tgt": tgt, "document": True, "split": True,
                                                        "src_lang": "de", "tgt_lang": "en"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [s["text"] for s in body["src_sentences"]] == ["Ein Hund.", "Ein Vogel.", "Ein Fisch."]
    assert [(s["row"], s["start"], s["end"]) for s in body["tgt_sentences"]] == [(0, 0, 6), (0, 7, 14), (0, 15, 22)]
    assert sorted(i for b in body["beads"] for i in b["src"]) == [0, 1, 2]
    r = httpx.post(doc_server.url + "/v1/align", json={"src": src, "tgt": tgt, "document": True, "split": True})
    assert r.status_code == 400 and "split needs src_lang and tgt_lang" in r.text
    r = httpx.post(doc_server.url + "/v1/align", json={"src": src, "tgt": tgt, "split": True})
    assert r.status_code in (400, 422) and "document mode" in r.text


def test_max_beads_outside_document_mode_is_refused(doc_server) -> None:
    """``max_beads`` shapes document mode only: pair mode would ignore it, so a value other than the default is a
    400 naming it (the default, as any client may send it, stays harmless)."""
    pair = {"src": ["Ein Hund."], "tgt": ["A dog."]}
    r = httpx.post(doc_server.url + "/v1/align", json=pair | {"max_beads": 3})
    assert r.status_code in (400, 422) and "max_beads: option(s) of document mode only" in r.text
    for given in ({"max_beads": AlignConfig().max_beads}, {"max_beads": 3, "document": True}):
        assert httpx.post(doc_server.url + "/v1/align", json=pair | given).status_code == 200


def test_pairs_with_nothing_near_score_zero_not_a_500(doc_server) -> None:
    """A pair whose neighbourhood mean is exactly 0 (here: texts the toy encoder does not know, zero vectors) had a
    ratio margin of 0 / 0 = NaN, which no JSON answer can carry (a 500); it scores 0."""
    r = httpx.post(doc_server.url + "/v1/align", json={"src": ["unbekannt"], "tgt": ["unknown"]})
    assert r.status_code == 200, r.text
    assert [(p["src"], p["tgt"], p["score"]) for p in r.json()["pairs"]] == [(0, 0, 0.0)]


def test_document_limits_bound_the_lines_sent_not_the_spans_the_alignment_adds(serve, tiny_encoder) -> None:
    """The token limits are checked on the client's lines, named by their row (an empty line has a row too); the
    multi-line spans the alignment embeds besides (each line again in up to max_beads - 1 of them) are not refused,
    only counted in usage."""
    line = "a b c d e f g h i j k"
    tokens = count_tokens(tiny_encoder, [line]).total
    # a queue of one request's tokens: the spans (more tokens than the lines) must be queued in parts
    settings = ServeSettings(max_input_tokens=tokens, max_request_tokens=4 * tokens, max_queue_tokens=4 * tokens)
    with serve({"tiny": tiny_encoder}, settings) as live:
        r = httpx.post(live.url + "/v1/align", json={"src": [line] * 4, "tgt": [line] * 4, "document": True})
        assert r.status_code == 200, r.text
        assert r.json()["usage"]["total_tokens"] > 8 * tokens  # the spans' tokens too
        longer = count_tokens(tiny_encoder, [line + " l"]).total
        r = httpx.post(live.url + "/v1/align", json={"src": [line, "", line + " l"], "tgt": [line], "document": True})
        assert r.status_code == 413 and f"src[2] has {longer} tokens; at most {tokens} per input" in r.text
        r = httpx.post(live.url + "/v1/align", json={"src": [line] * 5, "tgt": [line], "document": True})
        assert r.status_code == 413 and f"src has {5 * tokens} tokens in all" in r.text


def test_document_windowed_headers_name_the_rows_sent(toy_server) -> None:
    """``X-Xlsent-Windowed`` counts the lines sent that were embedded in windows, and names them as pair mode
    does (src rows, then tgt rows after them), not the spans the alignment embedded."""
    src = ["short one.", "", "word " * 100, "short two."]
    r = httpx.post(toy_server.url + "/v1/align", json={"src": src, "tgt": ["kurz.", "word " * 100], "document": True})
    assert r.status_code == 200, r.text
    assert r.headers["X-Xlsent-Windowed"] == "2" and r.headers["X-Xlsent-Windowed-Inputs"] == "2,5"


def test_split_refuses_more_sentences_than_a_side_may_have_lines(doc_server) -> None:
    paragraphs = [" ".join(f"Satz {i}." for i in range(300))] * 4  # 1200 sentences from 4 lines
    r = httpx.post(doc_server.url + "/v1/align", json={"src": paragraphs, "tgt": ["A dog."], "document": True,
                                                        "split": True, "src_lang": "de", "tgt_lang": "en"})
    assert r.status_code == 413 and f"src splits into 1200 sentences; at most {MAX_SIDE} a side" in r.text
