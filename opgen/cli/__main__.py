"""``python -m opgen.cli``: the ``opgen`` command."""

from opgen.cli import main

main()
