"""How every figure is drawn (atmlab.plotting): units with SI prefixes, no
offsets or mathtext, categories, distinct series, no overlapping ticks."""

from __future__ import annotations

import matplotlib.pyplot as plt
import pytest
from PIL import Image

from atmlab import plotting


def tick_texts(axis):
    return [t.get_text() for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]


def figure(xs, ys, **kwargs):
    with plotting.style():
        fig, ax = plt.subplots(figsize=(6, 4), dpi=100, **kwargs)
        ax.plot(xs, ys)
    return fig, ax


@pytest.mark.parametrize("top, unit, label, tick", [
    (800_000, "bytes", "Congestion window (kB)", "800"),
    (125e6, "bit/s", "Goodput (Mbit/s)", "100"),
    (0.008, "s", "Goodput (ms)", "8"),
    (2e-5, "s", "Goodput (µs)", "20"),
    (6000, "cells", "Goodput (cells)", "6,000"),
    (0.8, "fraction", "Goodput", "0.8"),
])
def test_an_axis_has_one_si_prefix_and_its_unit_in_the_label(top, unit, label, tick):
    fig, ax = figure([0, 1], [0, top])
    plotting.unit_axis(ax.yaxis, label.split(" (")[0], unit)
    plotting.finish(fig)
    assert ax.get_ylabel() == label
    values = [float(t.replace(",", "")) for t in tick_texts(ax.yaxis)]
    assert float(tick.replace(",", "")) in values and tick in {t.rstrip("0").rstrip(".") if "." in t else t
                                                               for t in tick_texts(ax.yaxis)}, tick_texts(ax.yaxis)
    assert max(abs(v) for v in values) < 1000 or unit == "cells"
    assert ax.yaxis.get_offset_text().get_text() == ""
    plt.close(fig)


def test_no_axis_has_an_offset_or_an_exponent():
    fig, ax = figure([274.9, 275.0, 275.1], [1e-5, 2e-5, 3e-5])
    plotting.finish(fig)  # nobody formatted these axes
    for axis in (ax.xaxis, ax.yaxis):
        assert axis.get_offset_text().get_text() == ""
        assert not any("e" in t or "+" in t for t in tick_texts(axis)), tick_texts(axis)
    assert 275.0 in [float(t) for t in tick_texts(ax.xaxis)] and "0.0000075" in tick_texts(ax.yaxis)
    plt.close(fig)


def test_a_log_axis_has_plain_numbers_not_mathtext():
    fig, ax = figure([1, 10_000], [0.01, 1e7])
    ax.set_xscale("log")
    ax.set_yscale("log")
    plotting.finish(fig)
    assert {"1", "10", "100", "1,000", "10,000"} <= set(tick_texts(ax.xaxis)), tick_texts(ax.xaxis)
    assert {"0.01", "1", "100", "1 M"} <= set(tick_texts(ax.yaxis)), tick_texts(ax.yaxis)
    assert not any("$" in t for t in tick_texts(ax.xaxis) + tick_texts(ax.yaxis))
    plt.close(fig)


def test_text_is_never_mathtext(tmp_path):
    fig, ax = figure([0, 1], [0, 1])
    ax.set_title("cost $x_$ and $\\alpha$")  # broken mathtext: matplotlib raises on saving if it parses it
    ax.set_xlabel("US$5")
    plotting.save(fig, tmp_path / "f.png")
    with Image.open(tmp_path / "f.png") as im:
        assert im.text["Title"] == "cost $x_$ and $\\alpha$"


def test_series_differ_in_colour_and_marker():
    looks = [plotting.series(k) for k in range(10)]
    assert len({(s["color"], s["marker"], s["linestyle"]) for s in looks}) == 10
    assert len({s["color"] for s in looks[:8]}) == 8 and len({s["marker"] for s in looks}) == 10
    with plotting.style():
        assert plt.rcParams["axes.prop_cycle"].by_key()["color"][:8] == list(plotting.COLOURS)


def overlapping(axis):
    renderer = axis.figure.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
    return plotting._overlaps(boxes, 0.0)


def test_tick_labels_do_not_overlap():
    # KPN Table 7's MTUs on a log axis: 8192 and 9188 are close.
    mtus = [512, 1024, 2048, 4096, 8192, 9188]
    fig, ax = figure(mtus, [1, 2, 3, 4, 5, 6])
    ax.set_xscale("log", base=2)
    ax.set_xticks(mtus, [str(m) for m in mtus])
    fig.canvas.draw()
    assert overlapping(ax.xaxis), "the case to fix"
    plotting.finish(fig)
    assert not overlapping(ax.xaxis)
    assert [t.get_text() for t in ax.get_xticklabels() if t.get_visible()] == [str(m) for m in mtus]
    plt.close(fig)
    # Many long categories: rotated, and thinned if rotating is not enough.
    names = [f"configuration {k}" for k in range(60)]
    fig, ax = figure(range(60), range(60))
    plotting.category_axis(ax.xaxis, names)
    plotting.finish(fig)
    assert not overlapping(ax.xaxis) or ax.get_xticklabels()[0].get_rotation() == 90
    plt.close(fig)


def test_a_quick_reproductions_figure_says_so(tmp_path):
    fig, ax = figure([0, 1], [0, 1])
    fig.suptitle("Study 000 Fig 7")
    with plotting.quick("--quick: short runs; not comparable."):
        plotting.save(fig, tmp_path / "q.png", note="the source")
    fig, ax = figure([0, 1], [0, 1])
    fig.suptitle("Study 000 Fig 7")
    plotting.save(fig, tmp_path / "full.png")
    with Image.open(tmp_path / "q.png") as q, Image.open(tmp_path / "full.png") as full:
        assert q.text["Title"] == "Study 000 Fig 7 (--quick)" and "not comparable" in q.text["Description"]
        assert full.text["Title"] == "Study 000 Fig 7" and "Description" not in full.text


def test_a_log_axis_with_a_prefixed_unit_has_one_prefix():
    fig, ax = figure([5e-6, 500e-6], [1e6, 155.52e6])
    ax.set_xscale("log")
    ax.set_yscale("log")
    plotting.unit_axis(ax.xaxis, "Delay", "s")
    plotting.unit_axis(ax.yaxis, "Rate", "bit/s")
    plotting.finish(fig)
    assert ax.get_xlabel() == "Delay (µs)" and {"10", "100"} <= set(tick_texts(ax.xaxis)), tick_texts(ax.xaxis)
    assert ax.get_ylabel() == "Rate (Mbit/s)" and {"1", "10", "100"} <= set(tick_texts(ax.yaxis))
    plt.close(fig)


def test_long_category_names_are_wrapped_and_a_long_axis_label_too():
    names = ["no fast retransmit (vanilla), the choice", "Tahoe (fast retransmit)",
             "Reno (fast retransmit and recovery)"]
    fig, ax = figure(range(3), [1, 2, 3])
    fig.set_size_inches(6.4, 3.0)
    plotting.category_axis(ax.xaxis, names, "setting")
    ax.set_ylabel("Efficiency (TCP goodput / TCP payload capacity), a long label")
    plotting.finish(fig)
    assert not overlapping(ax.xaxis)
    shown = [t.get_text() for t in ax.get_xticklabels()]
    assert [s.replace("\n", " ") for s in shown] == names and any("\n" in s for s in shown)
    assert ax.get_xticklabels()[0].get_rotation() == 0, "wrapped, not rotated"
    renderer = fig.canvas.get_renderer()
    assert "\n" in ax.get_ylabel()
    assert ax.yaxis.label.get_window_extent(renderer).height <= ax.get_window_extent(renderer).height
    plt.close(fig)


def test_a_small_plain_number_counts_in_a_power_of_ten_its_label_names():
    fig, ax = figure([0, 1], [0.0007, 0.0035])
    plotting.unit_axis(ax.yaxis, "Cell loss ratio", "fraction")
    fig2, ax2 = figure([0, 1], [0.0007, 0.0035])  # no label to name a power: the numbers as they are
    plotting.finish(fig)
    plotting.finish(fig2)
    assert ax.get_ylabel() == "Cell loss ratio (×10⁻³)" and "3.0" in tick_texts(ax.yaxis), tick_texts(ax.yaxis)
    assert "0.0030" in tick_texts(ax2.yaxis), tick_texts(ax2.yaxis)
    plt.close(fig)
    plt.close(fig2)


def test_a_legend_never_hides_data():
    fig, ax = figure([0, 1, 2, 3, 4], [0.09, 0.05, 0.04, 0.05, 0.07])
    ax.plot([0, 1, 2, 3, 4], [0.003, 0.0028, 0.0029, 0.0027, 0.0027], label="b")
    ax.plot([0, 4], [0.03, 0.02], label="c")
    ax.lines[0].set_label("a")
    ax.set_yscale("log")
    ax.legend(loc="upper right")
    fig.set_size_inches(3.5, 3)
    plotting.finish(fig)
    renderer = fig.canvas.get_renderer()
    assert not plotting._hidden(ax, ax.get_legend().get_window_extent(renderer), renderer)
    plt.close(fig)


def test_numbers_that_overlap_become_fewer_not_rotated():
    fig, ax = figure([400, 2200], [0, 1])
    fig.set_size_inches(2.5, 3)
    plotting.unit_axis(ax.xaxis, "Switch buffer B", "cells")
    plotting.finish(fig)
    assert not overlapping(ax.xaxis) and ax.get_xticklabels()[0].get_rotation() == 0
    plt.close(fig)
