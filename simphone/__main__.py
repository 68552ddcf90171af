"""``python -m simphone``: the same as the ``simphone`` console script."""

import sys

from simphone.cli import main

sys.exit(main())
