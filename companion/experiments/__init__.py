"""One module per chapter notebook: its configs, runs, claim checks, result dataclasses, explorer and exercise checkers.  Imports core and kit."""
