"""``atmlab`` (the console script) and ``python -m atmlab``: the command line.

``atmlab --version`` alone is answered here, before the command line is
imported (click's commands with their options and help texts, which name
the bundled scenarios and the results database): it prints the line
:func:`atmlab.about.text` makes, as the command line's ``--version`` does,
in a third of the time (docs/benchmark.md, "Start-up"). Everything else,
``--version`` among other arguments too, is :mod:`atmlab.cli`'s.
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from .about import text

        print(text())
        return
    from .cli import main as cli

    cli()


if __name__ == "__main__":
    main()
