"""What a run was about, as tables: the summary of ``atmlab run`` and of a
:class:`atmlab.Result` in a notebook.

A run's summary has one section per kind of thing the scenario holds, each
with the numbers that say what it did:

* TCP transfers of a fixed size or duration: bytes, transfer time and
  throughput (what ttcp prints); greedy TCP connections: goodput, loss
  recovery, RTT;
* UDP flows: datagrams, loss, throughput, delay and delay variation;
* cell sources (ON/OFF, piecewise): offered and carried rates;
* ABR sources (ACR, RM cells) and ABR switch ports (ERICA, EFCI);
* policers (UPC), switch ports, and hosts that lost frames or datagrams;
* time series recorded by probes.

Sections without anything in them are left out. The numbers are formatted
by :mod:`atmlab.fmt` (SI prefixes, three significant digits); every metric,
unformatted, is in :func:`all_metrics` (``atmlab run --all-metrics``) and
in the result itself.

The sections are data (:class:`Section`): the command line draws them with
rich, :meth:`atmlab.Result._repr_html_` as HTML tables.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import fmt

if TYPE_CHECKING:
    from .result import Result


@dataclass
class Section:
    """One table of a summary: its title, column names (the first ``left``
    of them are names, aligned left; the others numbers), rows of text and
    an optional note under it."""

    title: str
    columns: list[str]
    left: int
    rows: list[list[str]] = field(default_factory=list)
    note: str = ""
    text_columns: tuple[int, ...] = ()  # further columns of text, aligned left

    def aligned_left(self, i: int) -> bool:
        """Whether column `i` holds names or text (else numbers)."""
        return i < self.left or i in self.text_columns


def _pair(src: str, dst: str) -> str:
    return f"{src} → {dst}"


def _finite_apps(scenario: Mapping[str, Any] | None) -> set[str] | None:
    """Names of the TCP applications of fixed size or duration, if the
    scenario is known."""
    if scenario is None:
        return None
    out = set()
    for app in scenario.get("apps", []) or []:
        if not isinstance(app, Mapping) or app.get("kind") != "tcp_bulk":
            continue
        b = app.get("bytes")
        if app.get("duration") is not None or (b is not None and str(b).strip() != "inf"):
            out.add(str(app.get("name")))
    return out


def overview(r: Result) -> list[tuple[str, str, str]]:
    """The run-level lines: (what, value, explanation)."""
    raw = r.raw
    lines: list[tuple[str, str, str]] = []
    basis = raw.get("efficiency_basis")
    conns = raw.get("connections", [])
    if r.efficiency is not None and basis:
        text = (f"TCP goodput {fmt.si(r.tcp_goodput_bps, 'bit/s')} of at most "
                f"{fmt.si(basis['max_goodput_bps'], 'bit/s')} on {basis['link']} "
                f"({fmt.percent(basis['payload_fraction'])} of {fmt.stated(basis['link_rate_bps'], 'bit/s')}"
                + (f" less {fmt.si(basis['background_bps'], 'bit/s')} of cell-source background"
                   if basis.get("background_bps") else "") + ")")
        done = [c["completed_at_s"] for c in conns if c.get("completed_at_s") is not None]
        if conns and len(done) == len(conns):
            text += (f"; averaged over the {fmt.stated(r.duration_s, 's')} run, while the transfers ended by "
                     f"{fmt.si(max(done), 's')}: see their throughput below")
        lines.append(("efficiency", fmt.ratio(r.efficiency), text))
    if r.fairness is not None and len(conns) > 1:
        lines.append(("fairness", fmt.ratio(r.fairness), "Jain's index of the TCP goodputs"))
    offered = raw["switch_cells_offered"]
    lines.append(("cell loss", fmt.ratio(r.cell_loss_ratio),
                  f"{fmt.count(raw['switch_cells_dropped'])} of {fmt.count(offered)} cells at switch ports"
                  + (f"; {fmt.count(raw['link_cells_lost'])} lost on links" if raw.get("link_cells_lost") else "")))
    f = raw["frames"]
    lines.append(("frames", f"{fmt.count(f['lost'])} lost",
                  f"{fmt.count(f['sent'])} sent, {fmt.count(f['delivered'])} delivered, "
                  f"{fmt.count(f['in_flight'])} in flight at the end"))
    return lines


def _share(part: float, whole: float) -> str:
    return "" if not whole or not part else f" ({fmt.percent(part / whole)})"


def sections(r: Result, scenario: Mapping[str, Any] | None = None) -> list[Section]:
    """The summary's tables, in order; `scenario` (the run's scenario as
    data) tells fixed-size TCP transfers that did not finish from greedy
    ones."""
    raw = r.raw
    out: list[Section] = []
    finite = _finite_apps(scenario)
    conns = raw.get("connections", [])

    def is_transfer(c: dict[str, Any]) -> bool:
        if finite is not None:
            return c["name"] in finite
        return c.get("completed_at_s") is not None or c.get("transfer_throughput_bps") is not None

    transfers = [c for c in conns if is_transfer(c)]
    bulk = [c for c in conns if not is_transfer(c)]
    if transfers:
        s = Section("TCP transfers (fixed size or duration)",
                    ["name", "variant", "from → to", "delivered", "started", "transfer time", "throughput",
                     "retx segments", "timeouts"], 3,
                    note="throughput: bytes delivered x 8 / transfer time, as ttcp reports it")
        for c in transfers:
            done = c.get("completed_at_s")
            s.rows.append([
                c["name"], c["variant"], _pair(c["src"], c["dst"]), fmt.si(c["bytes_delivered"], "B"),
                fmt.si(c["started_at_s"], "s"),
                "not finished" if done is None else fmt.si(done - c["started_at_s"], "s"),
                fmt.si(c.get("transfer_throughput_bps"), "bit/s"),
                fmt.count(c["retransmitted_segments"]), fmt.count(c["timeouts"]),
            ])
        out.append(s)
    if bulk:
        s = Section("TCP connections (greedy)",
                    ["name", "variant", "from → to", "goodput", "retx segments", "timeouts", "fast retx",
                     "smoothed RTT"], 3)
        for c in bulk:
            s.rows.append([
                c["name"], c["variant"], _pair(c["src"], c["dst"]), fmt.si(c["goodput_bps"], "bit/s"),
                fmt.count(c["retransmitted_segments"]) + _share(c["retransmitted_segments"], c["segments_sent"]),
                fmt.count(c["timeouts"]), fmt.count(c["fast_retransmits"]), fmt.si(c.get("srtt_s"), "s"),
            ])
        out.append(s)

    flows = raw.get("udp_flows", [])
    if flows:
        recorded = any(u.get("arrivals_recorded") for u in flows)
        cols = ["name", "from → to", "sent", "lost", "throughput", "mean delay", "delay variation"]
        if recorded:
            cols += ["interarrival mean", "interarrival std"]
        s = Section("UDP flows", cols, 2,
                    note="throughput over each flow's own session (first send to last receipt); delay "
                         "variation: largest less smallest one-way delay (udp_flows.*.max_delay_s with "
                         "--all-metrics)")
        for u in flows:
            lost = "refused by the sender" if u.get("refused") else fmt.count(u["lost"]) + _share(u["lost"], u["sent"])
            thr = u.get("session_throughput_bps")
            row = [u["name"], _pair(u["src"], u["dst"]), fmt.count(u["sent"]), lost,
                   fmt.si(u["throughput_bps"] if thr is None else thr, "bit/s"),
                   fmt.si(u.get("mean_delay_s"), "s"), fmt.si(u.get("delay_variation_s"), "s")]
            if recorded:
                row += [fmt.si(u.get("interarrival_mean_s"), "s"), fmt.si(u.get("interarrival_std_s"), "s")]
            s.rows.append(row)
        out.append(s)

    sources = raw.get("cell_sources", [])
    if sources:
        s = Section("Cell sources (ON/OFF, piecewise, persistent ABR)",
                    ["name", "from → to", "sources", "peak", "mean offered", "throughput", "cells sent", "lost"], 2)
        for c in sources:
            lost = c["cells_sent"] - c["cells_received"]
            s.rows.append([c["name"], _pair(c["src"], c["dst"]), fmt.count(c["sources"]),
                           fmt.stated(c["peak_bps"], "bit/s"), fmt.si(c["mean_bps"], "bit/s"),
                           fmt.si(c["throughput_bps"], "bit/s"), fmt.count(c["cells_sent"]),
                           fmt.count(lost) + _share(lost, c["cells_sent"])])
        s.note = "lost: cells sent and not received (dropped, or still in the network at the end)"
        out.append(s)

    abr = raw.get("abr", [])
    if abr:
        s = Section("ABR sources", ["VC direction", "host", "mean ACR", "final ACR", "last ER", "data cells",
                                    "FRMs", "BRMs back", "cells waiting"], 2)
        for a in abr:
            s.rows.append([a["name"], a["host"], fmt.si(a["mean_acr_bps"], "bit/s"), fmt.si(a["acr_bps"], "bit/s"),
                           fmt.si(a.get("last_er_bps"), "bit/s"), fmt.count(a["data_cells"]),
                           fmt.count(a["frms_in_rate"] + a["frms_out_of_rate"]), fmt.count(a["brms_received"]),
                           fmt.count(a["cells_waiting"])])
        out.append(s)
    abr_ports = raw.get("abr_ports", [])
    if abr_ports:
        # Each algorithm reports its own readings (ERICA's of its last averaging interval).
        names: list[str] = []
        for a in abr_ports:
            names += [k for k in a if k not in ("port", "algorithm") and k not in names]
        s = Section("ABR switch ports (each controller's readings)",
                    ["port", "algorithm", *[_READING_HEADERS.get(n, n.removesuffix("_bps").replace("_", " "))
                                            for n in names]], 2)
        for a in abr_ports:
            s.rows.append([a["port"], a["algorithm"], *[_reading(n, a.get(n)) for n in names]])
        out.append(s)

    upc = raw.get("upc", [])
    if upc:
        s = Section("Policers (usage parameter control)",
                    ["VC", "at", "conformance", "cells", "tagged", "discarded"], 3)
        for u in upc:
            s.rows.append([u["vc"], u["at"], u["conformance"], fmt.count(u["cells"]),
                           fmt.count(u["tagged"]) + _share(u["tagged"], u["cells"]),
                           fmt.count(u["discarded"]) + _share(u["discarded"], u["cells"])])
        out.append(s)

    busy = [p for p in raw.get("ports", []) if p["kind"] == "switch" and p["cells_in"] > 0]
    if busy:
        s = Section("Switch ports", ["port", "rate", "cells in", "dropped", "max queue", "mean queue",
                                     "utilization"], 1)
        reasons = False
        for p in busy:
            dropped = fmt.count(p["dropped"]) + _share(p["dropped"], p["cells_in"])
            why = [f"{fmt.count(p[k])} {label}" for k, label in
                   (("dropped_overflow", "overflow"), ("dropped_frame", "frame"), ("dropped_clp", "CLP"))
                   if p.get(k)]
            if why:
                reasons = True
                dropped += f": {', '.join(why)}"
            s.rows.append([p["name"], fmt.stated(p["rate_bps"], "bit/s"), fmt.count(p["cells_in"]), dropped,
                           fmt.count(p["max_queue"]), fmt.ratio(p["mean_queue"]), fmt.percent(p["utilization"])])
        if reasons:
            s.note = ("drops by reason: overflow (a full buffer), frame (EPD, PPD, Selective Drop, FBA refusing "
                      "a frame or the rest of one), CLP (tagged cells above the CLP threshold)")
        out.append(s)

    hosts = [h for h in raw.get("hosts", [])
             if h.get("frames_discarded") or h.get("adapter_dropped") or h.get("receive_dropped")]
    if hosts:
        s = Section("Hosts that lost data", ["host", "frames corrupted", "dead cells", "adapter drops",
                                             "receive queue drops"], 1)
        for h in hosts:
            s.rows.append([h["name"], fmt.count(h["frames_discarded"]) + f" ({fmt.percent(h['frame_error_ratio'])})",
                           fmt.count(h["dead_cells"]), fmt.count(h["adapter_dropped"]),
                           fmt.count(h["receive_dropped"])])
        out.append(s)

    series = raw.get("series", [])
    if series:
        s = Section("Time series (Result.series; plotted by atmlab report)",
                    ["name", "kind", "of", "samples", "mean", "max", "last"], 3)
        for x in series:
            values = x["values"]
            unit = {"bit/s": "bit/s", "s": "s", "bytes": "B"}.get(x["unit"], "")

            def show(v: float | None, unit: str = unit, kind: str = x["unit"]) -> str:
                if v is None:
                    return fmt.NA
                return fmt.si(v, unit) if unit else (fmt.percent(v) if kind == "fraction" else fmt.ratio(v))

            s.rows.append([x["name"], x["kind"], x["target"], fmt.count(len(values)),
                           show(sum(values) / len(values) if values else None), show(max(values, default=None)),
                           show(values[-1] if values else None)])
        out.append(s)
    return out


def all_metrics(r: Result) -> Section:
    """Every number of the result (:func:`atmlab.metrics.flatten`), with its
    value in its unit and its description: ``atmlab run --all-metrics``."""
    from . import metrics

    s = Section("All metrics", ["metric", "value", "meaning"], 1, text_columns=(2,))
    for name, value in metrics.flatten(r.raw).items():
        s.rows.append([name, fmt.metric(value, metrics.unit(name)), metrics.describe(name)])
    return s


def header(r: Result, description: str | None = None) -> tuple[str, str]:
    """The title line and the line about the run itself."""
    raw = r.raw
    title = r.scenario + (f" — {description}" if description else "")
    return title, (f"{fmt.stated(r.duration_s, 's')} simulated, seed {r.seed}, replication {r.replication}; "
                   f"{fmt.count(raw['cell_hops'])} cell-hops, {fmt.count(raw['events'])} events")


# ------------------------------------------------------------------ HTML

def section_html(s: Section) -> str:
    """One section as an HTML table (names left, numbers right)."""
    e = html.escape
    def align(i: int) -> str:
        return "left" if s.aligned_left(i) else "right"

    head = "".join(f'<th style="text-align:{align(i)}">{e(c)}</th>' for i, c in enumerate(s.columns))
    body = "".join("<tr>" + "".join(f'<td style="text-align:{align(i)}">{e(v)}</td>' for i, v in enumerate(row))
                   + "</tr>" for row in s.rows)
    note = f"<p style='margin:0 0 1em 0'><small>{e(s.note)}</small></p>" if s.note else ""
    return (f"<h4 style='margin:0.8em 0 0.2em 0'>{e(s.title)}</h4>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{note}")


def result_html(r: Result, scenario: Mapping[str, Any] | None = None) -> str:
    """A result as HTML: the header, the run-level lines and every section."""
    e = html.escape
    title, run = header(r)
    lines = "".join(f"<tr><th style='text-align:left'>{e(a)}</th><td style='text-align:right'>{e(b)}</td>"
                    f"<td style='text-align:left'>{e(c)}</td></tr>" for a, b, c in overview(r))
    return (f"<div class='atmlab-result'><h3 style='margin:0'>{e(title)}</h3><p>{e(run)}</p>"
            f"<table>{lines}</table>" + "".join(section_html(s) for s in sections(r, scenario)) + "</div>")


# The headers of the controllers' readings that words alone would not make clear.
_READING_HEADERS = {"load_factor": "load factor", "abr_capacity_bps": "ABR capacity", "fair_share_bps": "fair share",
                    "high_priority_bps": "VBR+CBR", "active_vcs": "active VCs", "efci_marked": "EFCI marked",
                    "er_bps": "ER", "brms_lowered": "BRMs lowered", "brms_ci_set": "BRMs CI set",
                    "macr_bps": "MACR"}


def _reading(name: str, value: Any) -> str:
    """A controller's reading as the summary shows it: a rate with its SI
    prefix, a count whole, a ratio; blank where the algorithm has none."""
    if value is None:
        return ""
    if name.endswith("_bps"):
        return fmt.si(value, "bit/s")
    if isinstance(value, int):
        return fmt.count(value)
    return fmt.ratio(value)
