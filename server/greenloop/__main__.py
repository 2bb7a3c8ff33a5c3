"""`python -m greenloop`: the same CLI as the `greenloop` command."""

from greenloop.cli import main

raise SystemExit(main())
