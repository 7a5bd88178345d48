"""Tables in the terminal that stay readable however narrow it is.

Every data table of the command line goes through :func:`print_table`:
boxed when it fits; else without rules, one space apart; else each row a
paragraph of "column value" pairs. Columns are never narrower than their
longest word (a number is one word), so no number or word is ever cut;
the width left over goes where it saves the most lines
(:func:`_share_width`). rich draws the table; this module only chooses the
widths, which rich's own sharing (in proportion to the widest cells) left
taller than needed when long texts and short numbers share a table.
"""

from __future__ import annotations

import functools
import textwrap

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text


@functools.lru_cache(maxsize=1 << 16)
def _lines(text: str, width: int) -> int:
    """The lines `text` takes wrapped at spaces to `width` columns (every
    word fits: `width` is at least the longest), as rich wraps a cell.
    Cached: a table's cells repeat, and its widths are tried many times."""
    return sum(max(1, len(textwrap.wrap(p, width, break_long_words=False, break_on_hyphens=False)))
               for p in text.split("\n"))


def _height(columns: list[list[str]], widths: list[int]) -> int:
    """The lines of a table whose columns (texts, header first) have these
    widths: a row is as tall as its tallest cell."""
    return sum(max(_lines(t, w) for t, w in zip(row, widths, strict=True)) for row in zip(*columns, strict=True))


def _share_width(columns: list[list[str]], least: list[int], most: list[int], room: int) -> list[int]:
    """Column widths from `least` (each column's longest word) toward
    `most` (its longest cell) within `room` (at least ``sum(least)``) that
    keep the table short: the width left over goes either in proportion
    to what each column lacks, or a few columns at a time where it saves
    the most lines per column given, whichever makes fewer lines
    (`columns`: the columns' texts, header first; the first 40 rows are
    enough to judge by). A long text then gets room in keeping with how
    much of the table it fills."""
    columns = [c[:41] for c in columns]
    spare = room - sum(least)
    lack = [m - w for w, m in zip(least, most, strict=True)]
    share = [spare * k // sum(lack) for k in lack]
    for i in sorted(range(len(lack)), key=lambda i: -lack[i])[:spare - sum(share)]:
        share[i] += 1  # what the rounding down left, to those that lack most
    by_lack = [w + min(k, s) for w, k, s in zip(least, lack, share, strict=True)]
    by_lines = _widen_by_lines(columns, least, most, spare)
    return min(by_lines, by_lack, key=lambda ws: _height(columns, ws))


def _widen_by_lines(columns: list[list[str]], widths: list[int], most: list[int], spare: int) -> list[int]:
    """Gives up to `spare` more columns of width, a few at a time to the
    column where they save the most lines per column given: lines of the
    table first, then lines of its cells (so that two columns that both
    wrap on the same rows, neither of which alone makes a row shorter,
    are widened in turn instead of not at all). Plain Python: `atmlab run`
    prints its tables without importing numpy (start-up time)."""
    n = len(widths)
    caps = [min(most[i] - widths[i], spare) for i in range(n)]
    # lines[i][k][r]: the lines of row r's cell in column i at widths[i] + k.
    lines = [[[_lines(t, widths[i] + k) for t in columns[i]] for k in range(caps[i] + 1)] for i in range(n)]
    extra = [0] * n
    while spare > 0:
        now = [lines[i][extra[i]] for i in range(n)]
        cells = sum(map(sum, now))
        cost = (n + 1) * sum(max(row) for row in zip(*now, strict=True)) + cells  # the table's lines weigh most
        best: tuple[float, int, int] | None = None  # (saving per column, column, columns given)
        for i in range(n):
            # Each row's tallest cell outside column i (0 in a table of one column).
            others = [max(row, default=0) for row in zip(*now[:i], *now[i + 1:])] or [0] * len(now[i])
            for k in range(1, min(caps[i] - extra[i], spare) + 1):
                wider = lines[i][extra[i] + k]
                tall = sum(map(max, others, wider))
                rate = (cost - (n + 1) * tall - (cells - sum(now[i]) + sum(wider))) / k
                if rate > 0 and (best is None or rate > best[0]):
                    best = (rate, i, k)
        if best is None:
            break
        _, i, k = best
        extra[i] += k
        spare -= k
    return [widths[i] + extra[i] for i in range(n)]


def print_table(out: Console, title: str, headers: list[str], rows: list[list[str]], left: list[bool]) -> None:
    """Prints a table (a plain title; headers and cells in rich markup,
    `left` the columns aligned to the left) that stays readable when it is
    wider than the terminal (or the 120 columns of a pipe): each column at
    least as wide as its longest word (a number is one word), the width
    left over shared by :func:`_share_width`, and never a number or a word
    cut. Too wide for a boxed table, the columns go without rules, one
    space apart; too wide even then (a reproduction's comparison in 80
    columns), each row is a paragraph of "column value" pairs."""
    n = len(headers)
    columns = [[Text.from_markup(r[i]).plain for r in [headers, *rows]] for i in range(n)]
    least = [max([len(w) for t in col for w in t.split()] + [1]) for col in columns]
    most = [max(map(len, col)) for col in columns]
    for boxed, rules in ((True, 1 + 3 * n), (False, n - 1)):
        room = out.width - rules
        if sum(least) > room:
            continue
        widths = _share_width(columns, least, most, room) if sum(most) > room else [None] * n
        style = {} if boxed else {"box": None, "pad_edge": False, "collapse_padding": True}
        t = Table(title=escape(title) or None, title_justify="left", title_style="bold", **style)
        for h, is_left, w in zip(headers, left, widths, strict=True):
            t.add_column(h, justify="left" if is_left else "right", width=w)
        for r in rows:
            t.add_row(*r)
        out.print(t)
        return
    if title:
        out.print(f"[bold]{escape(title)}[/]")
    grid = Table.grid(padding=(0, 1))  # a bullet, and the row's pairs wrapped beside it
    grid.add_column()
    grid.add_column()
    for r in rows:
        grid.add_row("-", " · ".join(f"{h} [bold]{v}[/]" for h, v in zip(headers, r, strict=True) if v))
    out.print(grid)
