"""``xlsent split``: sentences as spans of their paragraphs (each maps back), empty lines, scripts without a
sentence mark, the two output forms and their refusals."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from xlsent.cli import main
from xlsent.data.sentence_split import sentence_spans, split_paragraphs

PARAGRAPHS = ["Dr. Müller kam am 3. Mai nach Bern. Er blieb zwei Tage!", "", "  War es gut? Ja.  ",
              "我们今天在花园里吃了午饭。天气很好！", "Ein Satz ohne Punkt"]


def test_every_sentence_is_a_span_of_its_paragraph() -> None:
    for lang, paragraph in (("de", PARAGRAPHS[0]), ("de", PARAGRAPHS[2]), ("zh", PARAGRAPHS[3])):
        spans = sentence_spans(paragraph, lang)
        assert len(spans) == 2
        for start, end in spans:
            assert paragraph[start:end] == paragraph[start:end].strip() != ""
        assert "".join(paragraph[a:b] for a, b in spans).replace(" ", "") == paragraph.replace(" ", "")


def test_paragraph_rows_map_back_and_an_empty_line_gives_no_sentence() -> None:
    sentences = split_paragraphs(PARAGRAPHS, "de")
    assert [s.paragraph for s in sentences] == [0, 0, 2, 2, 3, 3, 4]
    assert [s.text for s in sentences][:4] == ["Dr. Müller kam am 3. Mai nach Bern.", "Er blieb zwei Tage!",
                                               "War es gut?", "Ja."]
    assert all(PARAGRAPHS[s.paragraph][s.start:s.end] == s.text for s in sentences)



@pytest.mark.parametrize("space", ["\u00a0", "\u2009", "\u202f", "\u2003", "\u3000", "\u2028", "\u0085"])
@pytest.mark.parametrize("lang", ["en", "de", "ja"])
def test_a_wide_space_between_an_initial_and_a_period_is_split(lang: str, space: str) -> None:
    """sentencex panicked (a Rust panic through Python, past ``except Exception``) on a capital letter, a space
    character beyond ASCII, then a period; it is shown an ASCII space there, and the spans are the paragraph's."""
    paragraph = f"We chose plan B{space}. Then left."
    spans = sentence_spans(paragraph, lang)
    assert spans and spans[-1][1] == len(paragraph)
    assert "".join(paragraph[a:b] for a, b in spans).replace(" ", "") == paragraph.replace(" ", "")


@pytest.mark.parametrize(("lang", "paragraph", "sentences"), [
    # a quotation of two sentences: sentencex alone keeps it one sentence
    ("de", "„Wir gehen. Ihr bleibt.“ Dann ging er.", ["„Wir gehen.", "Ihr bleibt.“", "Dann ging er."]),
    ("ru", "«Я верю. Ты нет.» Потом он ушёл.", ["«Я верю.", "Ты нет.»", "Потом он ушёл."]),
    ("en", '"They are playful. They mean no harm." You just wait.',
     ['"They are playful.', 'They mean no harm."', "You just wait."]),
    # a list item's number: sentencex alone ends the sentence before with it, or keeps it alone
    ("de", "Der Bericht ist fertig. 2. Dasselbe gilt. Am 3. Mai kam er.",
     ["Der Bericht ist fertig.", "2. Dasselbe gilt.", "Am 3. Mai kam er."]),
    ("en", "It ended in 1955. 2. The next one.", ["It ended in 1955.", "2. The next one."]),
    # as sentencex had them: an opening quote, a quotation left open, French spaced guillemets, scripts without
    # spaces, brackets
    ("en", 'He got to the boy. "I yelled at everyone."', ["He got to the boy.", '"I yelled at everyone."']),
    ("en", 'He said: "We go. They stay. Then we see.', ['He said: "We go.', "They stay.", "Then we see."]),
    ("fr", "Il a dit : « On verra. » Puis il est parti.", ["Il a dit : « On verra. »", "Puis il est parti."]),
    ("zh", "他说。“我们走。”然后他走了。", ["他说。", "“我们走。”", "然后他走了。"]),
    ("ja", "彼は言った。「行こう！」彼女は笑った。", ["彼は言った。", "「行こう！」", "彼女は笑った。"]),
    ("en", "See the map (it is new). Then go.", ["See the map (it is new).", "Then go."]),
    # tokenized text: a lone period ends a sentence, before a digit or a bracket too; an untokenized one does not
    ("de", "bis 7750 m kamen . 1954 gab es ( 7150 m ) . Am Tag ging er . »",
     ["bis 7750 m kamen .", "1954 gab es ( 7150 m ) .", "Am Tag ging er . »"]),
    ("de", "Sie kamen 1953. 1954 gab es Schnee.", ["Sie kamen 1953. 1954 gab es Schnee."]),
])
def test_sentence_ends_inside_quotations_and_list_items_count(lang: str, paragraph: str, sentences: list[str]) -> None:
    assert [paragraph[a:b] for a, b in sentence_spans(paragraph, lang)] == sentences


def test_align_units_cut_at_colons_and_keep_no_invisible_piece() -> None:
    from xlsent.data.sentence_split import split_units

    paragraph = "Er schrieb: Wir gehen; \u200b"
    units = split_units([paragraph, ""], "de")
    assert [u.text for u in units] == ["Er schrieb:", "Wir gehen;"]
    assert all(paragraph[u.start:u.end] == u.text for u in units)


def test_scripts_without_a_sentence_mark_keep_the_paragraph(caplog: pytest.LogCaptureFixture) -> None:
    thai = "ฉันไปตลาด เมื่อวานนี้ ฉันซื้อผลไม้"
    with caplog.at_level(logging.WARNING):
        sentences = split_paragraphs([thai, ""], "th")
    assert [s.text for s in sentences] == [thai]
    assert "th has no sentence-final punctuation" in caplog.text


def test_split_command_writes_text_or_the_mapping(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "p.txt"
    source.write_text("\n".join(PARAGRAPHS[:3]) + "\n", encoding="utf-8")
    assert main(["split", str(source), "-o", str(tmp_path / "s.txt"), "--lang", "de"]) == 0
    assert "4 sentences from 3 paragraphs" in capsys.readouterr().err
    assert (tmp_path / "s.txt").read_text(encoding="utf-8").splitlines()[2:] == ["War es gut?", "Ja."]
    assert main(["split", str(source), "-o", str(tmp_path / "s.tsv"), "--lang", "de", "-q"]) == 0
    rows = [line.split("\t") for line in (tmp_path / "s.tsv").read_text(encoding="utf-8").splitlines()]
    assert rows[0] == ["line", "start", "end", "sentence"]
    assert rows[3] == ["3", "2", "13", "War es gut?"]  # 1-based input line, span in that line
    tsv = tmp_path / "p.tsv"
    tsv.write_text("id\ttext\n7\tEins. Zwei.\n", encoding="utf-8")
    assert main(["split", str(tsv), "--column", "text", "-o", str(tmp_path / "t.tsv"), "--lang", "de", "-q"]) == 0
    assert (tmp_path / "t.tsv").read_text(encoding="utf-8").splitlines()[1:] == ["2\t0\t5\tEins.", "2\t6\t11\tZwei."]


@pytest.mark.parametrize(("argv", "message"), [
    (["-o", "{w}/s.csv", "--lang", "de"], "name a .txt file"),
    (["-o", "{w}/p.txt", "--lang", "de"], "is also an input"),
    (["-o", "{w}/s.txt"], "--lang"),
])
def test_split_refuses_before_writing(argv: list[str], message: str, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "p.txt"
    source.write_text("Eins. Zwei.\n", encoding="utf-8")
    before = sorted(tmp_path.iterdir())
    assert main(["split", str(source), *(a.replace("{w}", str(tmp_path)) for a in argv)]) == 2
    assert message in capsys.readouterr().err
    assert sorted(tmp_path.iterdir()) == before and source.read_text(encoding="utf-8") == "Eins. Zwei.\n"


def test_align_split_aligns_sentences_of_paragraphs_and_maps_them_back(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """Two paragraphs a side, four sentences each; the beads number sentences, the maps say where each came from."""
    import xlsent.api
    from xlsent.testing import LookupEncoder

    de = ["Der Hund schläft. Die Katze spielt.", "Der Vogel singt. Das Pferd läuft."]
    fr = ["Le chien dort. Le chat joue.", "L'oiseau chante. Le cheval court."]
    meanings = {"Der Hund schläft.": 0, "Le chien dort.": 0, "Die Katze spielt.": 1, "Le chat joue.": 1,
                "Der Vogel singt.": 2, "L'oiseau chante.": 2, "Das Pferd läuft.": 3, "Le cheval court.": 3}
    table = {text: [float(i == k) for k in range(4)] for text, i in meanings.items()}
    monkeypatch.setattr(xlsent.api, "load", lambda model, backend="auto": LookupEncoder(table))
    (tmp_path / "de.txt").write_text("\n".join(de) + "\n", encoding="utf-8")
    (tmp_path / "fr.txt").write_text("\n".join(fr) + "\n", encoding="utf-8")
    out = tmp_path / "de-fr.beads"
    assert main(["align", str(tmp_path / "de.txt"), str(tmp_path / "fr.txt"), "-o", str(out), "--split",
                 "--src-lang", "de", "--tgt-lang", "fr", "-q"]) == 0
    beads = [line.rsplit(":", 1)[0] for line in out.read_text(encoding="utf-8").splitlines()]
    assert beads == ["[0]:[0]", "[1]:[1]", "[2]:[2]", "[3]:[3]"]
    src_map = [line.split("\t") for line in (tmp_path / "de-fr.beads.src-sentences.tsv").read_text(
        encoding="utf-8").splitlines()]
    assert src_map[0] == ["line", "start", "end", "sentence"]
    assert src_map[3] == ["2", "0", "16", "Der Vogel singt."]
    for line, start, end, sentence in src_map[1:]:
        assert de[int(line) - 1][int(start):int(end)] == sentence
    assert main(["align", str(tmp_path / "de.txt"), str(tmp_path / "fr.txt"), "-o", str(tmp_path / "x.beads"),
                 "--split", "-q"]) == 2
    assert "--split needs --src-lang and --tgt-lang" in capsys.readouterr().err
    assert main(["align", str(tmp_path / "de.txt"), str(tmp_path / "fr.txt"), "-o", "-", "--split", "--src-lang",
                 "de", "--tgt-lang", "fr", "-q"]) == 2
    assert "name an output file" in capsys.readouterr().err
