"""The kit every method's study uses: settings and their command line, reuse of trained models, verdicts on the
paper's claims, the number formatter of their evidence, and the one result shape the report renders.

A study module (``xlsent.methods.<method>.study``) declares only its settings (a :class:`~.settings.StudySettings`
subclass named ``Settings``), its studies (``STUDIES``: name -> :class:`~.study.Study`), their claims, and a
``setup(settings, out_dir)`` that loads what its studies share; :func:`xlsent.studies.command.main` gives it the
command line every study has (``--studies``, ``--out``, ``--rescore``, ``--retrain``, ``--set`` and one option per
setting).
"""
