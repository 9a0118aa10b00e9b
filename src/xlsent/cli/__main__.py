"""``python -m xlsent.cli``: the ``xlsent`` command."""

import sys

from xlsent.cli import main

sys.exit(main())
