"""``python -m companion``: the command line (see :mod:`companion.tools.cli`)."""

from companion.tools.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
