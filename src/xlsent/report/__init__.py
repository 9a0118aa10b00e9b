"""``xlsent report``: the results page (``docs/results.md``) and its plots, rendered from result files, benchmark
records and training logs (:func:`xlsent.report.page.write_report`)."""
