from xlsent.encoders.batching import split_windows, token_budget_batches


def test_windows_cover_every_token_in_order() -> None:
    content = [list(range(10)), [], list(range(3))]
    windows, n_long = split_windows(content, max_content=4)
    assert n_long == 1
    assert [w.ids for w in windows if w.sentence == 0] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [w.ids for w in windows if w.sentence == 1] == [[]]


def test_batches_respect_budget_and_cover_all() -> None:
    lengths = [5, 1, 30, 7, 7, 2, 100, 3]
    batches = list(token_budget_batches(lengths, batch_tokens=32))
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    for b in batches:
        assert len(b) == 1 or max(lengths[i] for i in b) * len(b) <= 32


def test_a_length_ratio_keeps_batches_even_and_covers_all() -> None:
    lengths = [40, 12, 11, 10, 9, 30, 3, 2, 2, 1]
    batches = list(token_budget_batches(lengths, batch_tokens=1000, max_ratio=1.25))
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert batches == [[0], [5], [1, 2, 3], [4], [6], [7, 8], [9]]
    assert list(token_budget_batches(lengths, batch_tokens=1000)) == [sorted(range(10), key=lambda i: -lengths[i])]
