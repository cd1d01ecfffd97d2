"""``python -m tasks.corpus.sample DEST [--bad]``: write the sample corpus (and, with --bad, bad input files)."""

from tasks.corpus.sample.generate import main

raise SystemExit(main())
