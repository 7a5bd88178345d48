"""How atmlab draws a figure: one look for the report's figures and every
study's, fit for a paper.

* Text is data, never mathtext: a ``$`` in a swept value or a probe's name is
  a dollar sign (:func:`style` turns ``text.parse_math`` off for every text
  made in it).
* Colours are Okabe and Ito's colour-blind-safe eight (``"C0"`` ... ``"C7"``
  inside :func:`style`); :func:`series` gives the k-th series a colour and a
  marker of its own, so that series differ in print and in grey too.
* Every number axis reads as people read it (:func:`unit_axis`): one SI
  prefix for the whole axis, in the axis label with the unit ("Congestion
  window (kB)", ticks 0 200 400 ...), never an offset (``+2.75e2``) or an
  exponent (a plain number below 0.01 counts in a power of ten named in the
  label: "Cell loss ratio (×10⁻³)"); a log axis has one prefix too, or plain
  numbers (0.01, 1, 100,000), or a prefix per tick (1 k, 10 M) over many
  decades. :func:`save` gives the axes nobody formatted the same ticks.
* Categories (swept words such as ``abr``, ``ubr``) are categories
  (:func:`category_axis`): one tick each, no numbers, no lines between them.
* :func:`save` lays the figure out (title and footnote wrapped to its width,
  axis labels to their axes, tick labels wrapped, rotated or thinned until
  none overlap), marks the figures of a
  quick reproduction (:func:`quick`) in the title and the footnote, puts the
  title into the PNG's metadata and closes the figure. The same data give
  the same bytes.

The numbers, prefixes and words come from :mod:`atmlab.display`.
"""

from __future__ import annotations

import contextlib
import math
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib import ticker  # noqa: E402
from matplotlib.rcsetup import cycler  # noqa: E402

from . import display, fmt  # noqa: E402

# Okabe & Ito (2008), colour-blind safe; yellow last (faint on white).
COLOURS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
LINESTYLES = ("-", "--", "-.", ":")
# Published values beside simulated ones: crosses and stars, unlike any of MARKERS.
PUBLISHED = ("x", "+", "*", "1")

RC: dict[str, Any] = {
    "text.parse_math": False,  # a "$" is a dollar sign
    "axes.formatter.useoffset": False,
    "axes.formatter.use_mathtext": False,
    "axes.prop_cycle": cycler(color=COLOURS),
    "legend.framealpha": 0.9,
    "svg.hashsalt": "atmlab",  # deterministic ids, should a figure be saved as SVG
}

FOOTNOTE_SIZE = 7
WHOLE = {"cells"}  # units of whole things: ticks at whole numbers only
_quick: str | None = None  # the note of a quick reproduction, while its figures are drawn


def style() -> contextlib.AbstractContextManager[Any]:
    """The settings every figure is made and saved in (a context)."""
    return matplotlib.rc_context(RC)


@contextlib.contextmanager
def quick(note: str | None) -> Iterator[None]:
    """Within this context, :func:`save` marks every figure as a quick
    reproduction's: "(--quick)" in its title and `note` (what --quick runs,
    and that it is not comparable) in its footnote. None: not quick."""
    global _quick
    before, _quick = _quick, note
    try:
        yield
    finally:
        _quick = before


def series(k: int, line: bool = True) -> dict[str, Any]:
    """The look of the k-th series: a colour and a marker of its own (and a
    line style, after the colours run out), as ``plot`` keywords."""
    out: dict[str, Any] = {"color": COLOURS[k % len(COLOURS)], "marker": MARKERS[k % len(MARKERS)]}
    if line:
        out["linestyle"] = LINESTYLES[(k // len(COLOURS)) % len(LINESTYLES)]
    return out


# ------------------------------------------------------------------ numbers

def tick_text(x: float, decimals: int) -> str:
    """A tick's number with `decimals` decimals and thousands separators;
    never "-0"."""
    text = f"{x:,.{decimals}f}"
    return text[1:] if text.startswith("-") and float(text.replace(",", "")) == 0 else text


def decimals(values: Sequence[float], most: int = 9) -> int:
    """The fewest decimals that show every value exactly (to 1e-9 of it)."""
    for d in range(most + 1):
        if all(abs(round(v, d) - v) <= 1e-9 * max(1.0, abs(v)) for v in values):
            return d
    return most


def _shown_unit(unit: str) -> str:
    """The scenario format's "us" as a figure writes it: "µs"."""
    return "µ" + unit[1:] if unit.startswith("u") and unit[1:] in display._PREFIXED else unit


def power(exponent: int) -> str:
    """A power of ten as text: ``power(-3)`` is "10⁻³"."""
    return "10" + str(exponent).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


class UnitFormatter(ticker.Formatter):
    """Tick labels of a linear axis with one SI prefix for the whole axis
    (chosen from its largest tick), the prefixed unit in the axis label:
    800000 B gives ticks up to "800" and the label "... (kB)". A unit
    without prefixes (cells, a study's "KB/s") keeps its numbers, with
    thousands separators; a plain number below 0.01 (a loss ratio) is
    counted in a power of ten that the label names ("Cell loss ratio
    (×10⁻³)": 1.5 for 0.0015). No offset, no exponent."""

    def __init__(self, label: str | None = None, unit: str | None = None, axis: Any = None) -> None:
        self.label = label
        self.unit = display.axis_unit(unit)
        self.target = axis  # the axis whose label names the unit (set_locs may run for a shared one)
        self.factor, self.shown, self.digits = 1.0, self.unit, 0

    def set_locs(self, locs: Sequence[float]) -> None:
        axis = self.target or self.axis
        lo, hi = sorted(axis.get_view_interval()) if axis is not None else (-math.inf, math.inf)
        slack = 1e-9 * max(abs(lo), abs(hi), 1e-300)
        seen = [float(x) for x in locs if lo - slack <= x <= hi + slack] or [float(x) for x in locs]
        self.factor, shown = display.scale(seen, self.unit)
        self.shown = _shown_unit(shown)
        top = max((abs(x) for x in seen), default=0.0)
        if self.unit == "" and 0 < top < 0.01 and self.label is not None:  # the label must say the power
            exponent = 3 * math.floor(math.log10(top) / 3)
            self.factor, self.shown = 10.0 ** -exponent, f"×{power(exponent)}"
        self.digits = decimals([x * self.factor for x in seen])
        if self.label is not None and axis is not None:
            axis.set_label_text(display.header(self.label, self.shown))

    def __call__(self, x: float, pos: int | None = None) -> str:
        return tick_text(x * self.factor, self.digits)

    def format_data(self, value: float) -> str:
        return display.number(value * self.factor)


class LogUnitFormatter(ticker.LogFormatter):
    """Tick labels of a log axis. With a prefixed unit (bit/s, s, B) over at
    most six decades: one prefix for the axis (its middle's), in its label,
    as on a linear axis ("Delay (µs)": 10, 100). Otherwise plain numbers
    ("0.01", "1", "100,000") on an axis within 0.001 and 999,999, else an SI
    prefix on every tick from 1,000 up and below 0.001 ("1 k", "10 M", "10
    µ"). Which ticks are labelled is :class:`matplotlib.ticker.LogFormatter`'s
    choice."""

    def __init__(self, *args: Any, label: str | None = None, unit: str | None = None, axis: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.label, self.unit, self.target = label, display.axis_unit(unit), axis
        self.factor: float | None = None  # one prefix for the axis
        self.prefixed = False  # a prefix per tick

    def set_locs(self, locs: Sequence[float] | None = None) -> None:
        super().set_locs(locs)
        axis = self.target or self.axis
        lo, hi = sorted(abs(v) for v in axis.get_view_interval()) if axis is not None else (1.0, 1.0)
        self.factor, shown = None, self.unit
        if self.unit in display._PREFIXED and 0 < lo and hi / lo <= 1e6:
            self.factor, shown = display.scale([math.sqrt(lo * hi)], self.unit)  # the prefix of the middle
            shown = _shown_unit(shown)
        self.prefixed = self.factor is None and (hi >= 999_999.5 or 0 < lo < 0.001)
        if self.label is not None and axis is not None:
            axis.set_label_text(display.header(self.label, shown))

    def _num_to_string(self, x: float, vmin: float, vmax: float) -> str:
        if x == 0:
            return "0"
        if self.factor is not None:
            return tick_text(x * self.factor, decimals([x * self.factor]))
        if not self.prefixed or 1e-3 <= abs(x) < 1e3:
            return tick_text(x, decimals([x]))
        return fmt.si(x, "", 3, trim=True)


def _whole_locator() -> Any:
    """Ticks at whole numbers, the steps of matplotlib's default locator."""
    return ticker.MaxNLocator(nbins="auto", steps=[1, 2, 2.5, 5, 10], integer=True, min_n_ticks=1)


def unit_axis(axis: Any, label: str | None = None, unit: str | None = None) -> None:
    """Formats `axis` (``ax.xaxis``, ``ax.yaxis``) for values in base `unit`
    (a metric's: "bit/s", "s", "bytes", "cells", "fraction", or a study's own
    such as "KB/s"): one SI prefix for the axis, and, with a `label`, the
    axis label in words with the prefixed unit. Cells are whole: no tick
    between two. A log axis: :class:`LogUnitFormatter`."""
    if axis.get_scale() == "log":
        base = axis.get_major_formatter()._base if hasattr(axis.get_major_formatter(), "_base") else 10.0
        axis.set_major_formatter(LogUnitFormatter(base, label=label, unit=unit, axis=axis))
        axis.set_minor_formatter(LogUnitFormatter(base, labelOnlyBase=False, unit=unit, axis=axis))
        if label is not None:
            axis.set_label_text(display.header(label, display.axis_unit(unit)))
        return
    if display.axis_unit(unit) in WHOLE:
        axis.set_major_locator(_whole_locator())
    axis.set_major_formatter(UnitFormatter(label, unit, axis))
    if label is not None:  # until the first draw picks the prefix
        axis.set_label_text(display.header(label, display.axis_unit(unit)))


def count_axis(axis: Any, label: str | None = None, unit: str | None = None) -> None:
    """An axis of whole things (connections, sources): ticks at whole
    numbers only."""
    axis.set_major_locator(_whole_locator())
    unit_axis(axis, label, unit)


def category_axis(axis: Any, labels: Sequence[str], label: str | None = None) -> list[float]:
    """Categories along `axis`: one tick per label at 0, 1, 2, ... (returned,
    to draw at), a margin of half a category either side; no numbers."""
    positions = [float(i) for i in range(len(labels))]
    axis.set_major_locator(ticker.FixedLocator(positions))
    axis.set_major_formatter(ticker.FixedFormatter([str(v) for v in labels]))
    axis.set_minor_locator(ticker.NullLocator())
    lim = (-0.5, len(labels) - 0.5) if labels else (-0.5, 0.5)
    if axis.axis_name == "x":
        axis.axes.set_xlim(*lim)
    else:
        axis.axes.set_ylim(*lim)
    if label is not None:
        axis.set_label_text(label)
    return positions


def dodge(k: int, n: int, width: float = 0.5) -> float:
    """The offset of the k-th of n series at a category, so that their
    points and bars stand side by side within `width` of a category."""
    return 0.0 if n <= 1 else width * (k / (n - 1) - 0.5)


# ------------------------------------------------------------------ saving

def _plain_ticks(fig: Any) -> None:
    """The axes that nobody formatted get :func:`unit_axis`'s ticks (no
    offset, no exponent, no mathtext on a log axis)."""
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            major = axis.get_major_formatter()
            if type(major) is ticker.ScalarFormatter:
                axis.set_major_formatter(UnitFormatter(None, None, axis))
            elif isinstance(major, ticker.LogFormatterSciNotation | ticker.LogFormatterMathtext):
                axis.set_major_formatter(LogUnitFormatter(major._base, labelOnlyBase=major.labelOnlyBase))
            minor = axis.get_minor_formatter()
            if isinstance(minor, ticker.LogFormatterSciNotation | ticker.LogFormatterMathtext):
                axis.set_minor_formatter(LogUnitFormatter(minor._base, labelOnlyBase=minor.labelOnlyBase,
                                                          minor_thresholds=minor.minor_thresholds))


def _wrap(text: Any, fig: Any, fontsize: float | None = None) -> None:
    """Wraps a figure-wide text to the figure's width (an estimate from its
    font size, so that the layout stays deterministic)."""
    size = fontsize or text.get_fontsize()
    chars = max(20, int(fig.get_figwidth() * 72 / (0.56 * size)) - 2)
    lines = []
    for line in text.get_text().split("\n"):
        lines += textwrap.wrap(line, chars) or [""]
    text.set_text("\n".join(lines))


def _title(fig: Any) -> Any:
    """The figure's title text: its suptitle, else its first axes' title."""
    if fig._suptitle is not None and fig._suptitle.get_text():
        return fig._suptitle
    for ax in fig.axes:
        if ax.get_title():
            return ax.title
    return None


def _overlaps(boxes: list[Any], pad: float) -> bool:
    return any(a.x1 + pad > b.x0 and b.x1 + pad > a.x0 and a.y1 + pad > b.y0 and b.y1 + pad > a.y0
               for i, a in enumerate(boxes) for b in boxes[i + 1:])


def _labels(axis: Any, renderer: Any) -> list[Any]:
    lo, hi = sorted(axis.get_view_interval())
    out = []
    for tick in axis.get_major_ticks():
        label = tick.label1
        loc = tick.get_loc()
        if label.get_visible() and label.get_text() and tick.get_visible() and loc is not None \
                and lo - 1e-9 * abs(hi - lo) <= loc <= hi + 1e-9 * abs(hi - lo):
            out.append(label)
    return out


def _unclutter(fig: Any) -> bool:
    """Wraps x tick labels of words that overlap, else rotates them (45,
    then 90 degrees), then thins them (every second, third, ... label) until none do; thins y tick
    labels that overlap. True if anything changed."""
    renderer = fig.canvas.get_renderer()
    pad = 2.0 * fig.dpi / 72
    changed = False
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            labels = _labels(axis, renderer)
            if len(labels) < 2 or not _clash(axis, labels, renderer, pad):
                continue
            changed = True
            if axis.axis_name == "x" and (_wrap_ticks(axis, labels, renderer, pad)
                                          or _fewer_ticks(axis, renderer, pad)):
                continue
            if axis.axis_name == "x":
                for rotation in (45, 90):
                    for t in labels:
                        t.set_rotation(rotation)
                        t.set_horizontalalignment("right" if rotation == 45 else "center")
                        t.set_rotation_mode("anchor" if rotation == 45 else "default")
                    if not _crowded(labels, renderer, pad, rotation):
                        break
                else:
                    _thin(labels, renderer, pad, 90)
                axis.set_tick_params(labelrotation=labels[0].get_rotation())
            else:
                _thin(labels, renderer, pad, 0)
    return changed


def _wrap_ticks(axis: Any, labels: list[Any], renderer: Any, pad: float) -> bool:
    """Wraps tick labels of words (categories) onto up to three lines to fit
    between their neighbours; True if they then fit, else they are left as
    they were."""
    formatter = axis.get_major_formatter()
    if not isinstance(formatter, ticker.FixedFormatter) or not any(" " in str(t) for t in formatter.seq):
        return False
    centres = sorted((b.x0 + b.x1) / 2 for b in (t.get_window_extent(renderer) for t in labels))
    gap = min(b - a for a, b in zip(centres, centres[1:], strict=False))
    size = max(t.get_fontsize() for t in labels) * axis.figure.dpi / 72
    chars = int((gap - pad) / (0.6 * size))
    wrapped = [textwrap.fill(str(t), chars) if chars >= 6 else str(t) for t in formatter.seq]
    if chars < 6 or max(w.count("\n") for w in wrapped) > 2:
        return False
    axis.set_major_formatter(ticker.FixedFormatter(wrapped))
    axis.figure.canvas.draw()
    if _overlaps([t.get_window_extent(renderer) for t in _labels(axis, renderer)], pad):
        axis.set_major_formatter(formatter)
        axis.figure.canvas.draw()
        return False
    return True


def _fewer_ticks(axis: Any, renderer: Any, pad: float) -> bool:
    """Numbers chosen by a locator (not categories) that overlap: fewer of
    them, down to three; True if they then fit, else the locator is left
    as it was."""
    locator = axis.get_major_locator()
    if not isinstance(locator, ticker.MaxNLocator) or isinstance(axis.get_major_formatter(), ticker.FixedFormatter):
        return False
    shown = len(_labels(axis, renderer))
    for nbins in range(shown - 2, 2, -1):
        axis.set_major_locator(ticker.MaxNLocator(nbins=nbins, steps=[1, 2, 2.5, 5, 10],
                                                  integer=locator._integer, min_n_ticks=1))
        axis.figure.canvas.draw()
        labels = _labels(axis, renderer)
        if len(labels) > 1 and not _clash(axis, labels, renderer, pad):
            return True
    axis.set_major_locator(locator)
    axis.figure.canvas.draw()
    return False


def _hidden(ax: Any, box: Any, renderer: Any) -> bool:
    """Whether `box` (a legend's) hides data of `ax`: a line drawn in data
    coordinates through it, or a bar under it (reference lines across the
    axes, axhline and the like, do not count)."""
    for line in ax.lines:
        if line.get_visible() and line.get_transform() == ax.transData and len(line.get_xydata()):
            path = line.get_transform().transform_path(line.get_path())
            if path.intersects_bbox(box, filled=False) or any(box.contains(x, y) for x, y in path.vertices):
                return True
    return any(p.get_visible() and p.get_window_extent(renderer).overlaps(box) for p in ax.patches)


def _free_data(fig: Any) -> bool:
    """Moves a legend that hides data to another corner of its axes, else
    above the axes (panels stacked in one column) or beside them (right).
    True if any moved."""
    renderer = fig.canvas.get_renderer()
    moved = False
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None or legend.get_bbox_to_anchor() is not ax.bbox \
                or not _hidden(ax, legend.get_window_extent(renderer), renderer):
            continue
        moved = True
        for loc in (2, 1, 3, 4, 9, 8, 6, 7):  # upper left, upper right, lower left, lower right, centres
            # The legend's box follows its loc without drawing the figure
            # again (a draw per try was most of a reproduction's figure time).
            legend.set_loc(loc)
            if not _hidden(ax, legend.get_window_extent(renderer), renderer):
                break
        else:
            if len({round(a.get_position().x0, 2) for a in fig.axes}) == 1 and not ax.get_title():
                # Panels stacked in one column (time series): above the axes, in a row, not beside all of them.
                texts = legend.get_texts()
                title = legend.get_title().get_text()
                ax.legend(legend.legend_handles, [t.get_text() for t in texts], loc="lower left",
                          bbox_to_anchor=(0.0, 1.02), borderaxespad=0, ncols=min(3, len(texts)),
                          fontsize=texts[0].get_fontsize() if texts else None, title=title or None,
                          title_fontsize=legend.get_title().get_fontsize())
            else:
                legend.set_loc(2)
                legend.set_bbox_to_anchor((1.02, 1.0), transform=ax.transAxes)
    return moved


def _fit_labels(fig: Any) -> bool:
    """Wraps an axis label longer than its axes onto as many lines as it
    needs. True if any was."""
    renderer = fig.canvas.get_renderer()
    changed = False
    for ax in fig.axes:
        box = ax.get_window_extent(renderer)
        for label, room, along in ((ax.yaxis.label, box.height, "height"), (ax.xaxis.label, box.width, "width")):
            text = label.get_text()
            length = getattr(label.get_window_extent(renderer), along) if text else 0.0
            if length > room > 0:
                per_char = length / max(len(line) for line in text.split("\n"))
                label.set_text(textwrap.fill(text.replace("\n", " "), max(12, int(room / per_char) - 1)))
                changed = True
    return changed


def _clash(axis: Any, labels: list[Any], renderer: Any, pad: float) -> bool:
    """Whether tick labels overlap: their boxes, or for x labels rotated
    already, the room between their anchors."""
    rotation = labels[0].get_rotation() % 180
    if rotation and axis.axis_name == "x":
        return _crowded(labels, renderer, pad, rotation)
    return _overlaps([t.get_window_extent(renderer) for t in labels], pad)


def _crowded(labels: list[Any], renderer: Any, pad: float, rotation: float) -> bool:
    """Whether rotated x tick labels crowd each other: the distance between
    neighbours' anchors is less than the text's height over sin(rotation)."""
    xs = sorted(t.get_window_extent(renderer).x1 if rotation == 45 else
                (t.get_window_extent(renderer).x0 + t.get_window_extent(renderer).x1) / 2 for t in labels)
    height = max(t.get_fontsize() for t in labels) * labels[0].figure.dpi / 72
    need = height / math.sin(math.radians(rotation)) + pad
    return any(b - a < need for a, b in zip(xs, xs[1:], strict=False))


def _thin(labels: list[Any], renderer: Any, pad: float, rotation: float) -> None:
    """Hides every label but one in k (the smallest k that leaves no two
    shown labels crowded)."""
    for k in range(2, len(labels) + 1):
        shown = labels[::k]
        if rotation:
            crowded = _crowded(shown, renderer, pad, rotation)
        else:
            crowded = _overlaps([t.get_window_extent(renderer) for t in shown], pad)
        if not crowded:
            for i, t in enumerate(labels):
                t.set_visible(i % k == 0)
            return


def finish(fig: Any, note: str | None = None) -> str:
    """Lays `fig` out as :func:`save` writes it, and returns its title:
    unformatted axes given plain ticks, the title wrapped to the figure's
    width, `note` (sources, what the markers mean) as a footnote, the
    figure marked if drawn for a quick reproduction (:func:`quick`), tick
    labels wrapped, fewer, rotated or thinned until none overlap, axis
    labels wrapped to their axes, legends moved off the data."""
    with style():
        _plain_ticks(fig)
        title = _title(fig)
        if _quick is not None:
            if title is None:
                title = fig.suptitle("")
            title.set_text(f"{title.get_text()} (--quick)".strip())
        if title is not None and title is fig._suptitle:
            _wrap(title, fig)
            title.set_y(1 - 0.04 / fig.get_figheight())  # at the top: tight_layout keeps its height free below
        lines = [x for x in (note, _quick) if x]
        bottom = 0.0
        if lines:
            foot = fig.text(0.01, 0.01, "\n".join(lines), fontsize=FOOTNOTE_SIZE, color="0.3", va="bottom")
            _wrap(foot, fig)
            height = foot.get_text().count("\n") + 1
            bottom = (height * FOOTNOTE_SIZE * 1.25 + 6) / (fig.get_figheight() * 72)
        fig.tight_layout(rect=(0, bottom, 1, 1))
        fig.canvas.draw()
        for _ in range(3):  # each change moves the axes: look again
            if not (_unclutter(fig) | _fit_labels(fig) | _free_data(fig)):
                break
            fig.tight_layout(rect=(0, bottom, 1, 1))
            fig.canvas.draw()
        return title.get_text().replace("\n", " ") if title is not None else ""


def save(fig: Any, path: Path, note: str | None = None, dpi: float | None = None) -> Path:
    """Lays out `fig` (:func:`finish`), writes it as a PNG at `path` with
    its title (and a quick reproduction's note) in the PNG's metadata, and
    closes it."""
    with style():
        title = finish(fig, note)
        path.parent.mkdir(parents=True, exist_ok=True)
        metadata = {"Title": title or path.stem}
        if _quick is not None:
            metadata["Description"] = _quick
        fig.savefig(path, dpi=dpi or "figure", metadata=metadata)
    plt.close(fig)
    return path


__all__ = ["COLOURS", "MARKERS", "PUBLISHED", "category_axis", "count_axis", "dodge", "finish", "quick", "save",
           "series", "style", "unit_axis"]
