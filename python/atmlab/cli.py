"""The ``atmlab`` command line.

Every user-facing error (a bad scenario, a missing file) is printed as one
``error:`` line on standard error with exit status 2; no traceback.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import __version__, bench as bench_mod, reproduce as reproduce_mod
from .api import run as run_scenario
from .errors import AtmlabError
from .result import Result
from .scenario import bundled_names, validate as validate_scenario

# Not on a terminal (a pipe, a log file, CI), rich would wrap at 80 columns.
_width = None if sys.stdout.isatty() else 120
out = Console(highlight=False, width=_width)
err = Console(stderr=True, highlight=False, width=_width)


class AtmlabGroup(click.Group):
    """Turns atmlab's own errors into one clean line and exit status 2."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AtmlabError as e:
            err.print(f"[bold red]error:[/] {e}", soft_wrap=True)
            sys.exit(2)


@click.group(cls=AtmlabGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="atmlab")
def main() -> None:
    """atmlab: a cell-level laboratory for TCP/IP over ATM networks.

    Run a scenario with `atmlab run FILE`, reproduce a published study with
    `atmlab reproduce STUDY`, measure speed with `atmlab bench`.
    """


def _fmt(x: float | None, spec: str = ".3f") -> str:
    return "n/a" if x is None else format(x, spec)


def _mbps(bps: float) -> str:
    return f"{bps / 1e6:.2f}"


def print_summary(r: Result, description: str | None = None) -> None:
    raw = r.raw
    out.print(f"[bold]{r.scenario}[/]" + (f" — {description}" if description else ""))
    out.print(f"{r.duration_s:g} s simulated, seed {r.seed}, replication {r.replication}; "
              f"{raw['cell_hops']:,} cell-hops, {raw['events']:,} events")
    out.print()
    basis = raw.get("efficiency_basis")
    lines = Table.grid(padding=(0, 2))
    if r.efficiency is not None and basis:
        lines.add_row("efficiency", _fmt(r.efficiency),
                      f"TCP goodput {_mbps(r.tcp_goodput_bps)} Mbit/s of at most "
                      f"{_mbps(basis['max_goodput_bps'])} Mbit/s on {basis['link']} "
                      f"({basis['payload_fraction']:.1%} of {_mbps(basis['link_rate_bps'])})")
    if r.fairness is not None:
        lines.add_row("fairness", _fmt(r.fairness), "Jain's index of the TCP goodputs")
    lines.add_row("cell loss", f"{r.cell_loss_ratio:.3g}",
                  f"{raw['switch_cells_dropped']:,} of {raw['switch_cells_offered']:,} cells at switch ports")
    f = raw["frames"]
    lines.add_row("frames", f"{f['lost']:,} lost",
                  f"{f['sent']:,} sent, {f['delivered']:,} delivered, {f['in_flight']:,} in flight at the end")
    out.print(lines)

    if raw["connections"]:
        t = Table(title="TCP connections", title_justify="left", title_style="bold")
        for col in ["name", "variant", "from", "to", "goodput Mbit/s", "retx segments", "timeouts", "fast retx"]:
            t.add_column(col, justify="left" if col in ("name", "variant", "from", "to") else "right")
        for c in raw["connections"]:
            t.add_row(c["name"], c["variant"], c["src"], c["dst"], _mbps(c["goodput_bps"]),
                      f"{c['retransmitted_segments']:,}", str(c["timeouts"]), str(c["fast_retransmits"]))
        out.print(t)
    if raw["udp_flows"]:
        t = Table(title="UDP flows", title_justify="left", title_style="bold")
        for col in ["name", "from", "to", "sent", "received", "lost", "kbit/s", "mean delay ms"]:
            t.add_column(col, justify="left" if col in ("name", "from", "to") else "right")
        for u in raw["udp_flows"]:
            delay = "n/a" if u["mean_delay_s"] is None else f"{u['mean_delay_s'] * 1e3:.3f}"
            t.add_row(u["name"], u["src"], u["dst"], f"{u['sent']:,}", f"{u['received']:,}", f"{u['lost']:,}",
                      f"{u['throughput_bps'] / 1e3:.1f}", delay)
        out.print(t)
    busy = [p for p in raw["ports"] if p["kind"] == "switch" and p["cells_in"] > 0]
    if busy:
        t = Table(title="Switch ports", title_justify="left", title_style="bold")
        for col in ["port", "cells in", "cells out", "dropped", "max queue", "mean queue", "utilization"]:
            t.add_column(col, justify="left" if col == "port" else "right")
        for p in busy:
            t.add_row(p["name"], f"{p['cells_in']:,}", f"{p['cells_out']:,}", f"{p['dropped']:,}",
                      f"{p['max_queue']:,}", f"{p['mean_queue']:.1f}", f"{p['utilization']:.1%}")
        out.print(t)


SCENARIO_HELP = "a scenario file, or the name of a bundled scenario (" + ", ".join(bundled_names()) + ")"


@main.command(help=f"Run SCENARIO and print a summary.\n\nSCENARIO is {SCENARIO_HELP}.")
@click.argument("scenario", metavar="SCENARIO")
@click.option("--seed", type=click.IntRange(min=0), default=None,
              help="Master seed (default: the scenario's simulation.seed).")
@click.option("--replication", type=click.IntRange(min=0), default=0, show_default=True,
              help="Replication index: independent random streams for the same seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
def run(scenario: str, seed: int | None, replication: int, as_json: bool) -> None:
    sc = validate_scenario(scenario, seed=seed)
    if err.is_terminal:
        with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                      console=err, transient=True) as bar:
            task = bar.add_task(f"simulating {sc.name}", total=1.0)
            r = run_scenario(sc.source, seed=seed, replication=replication,
                             progress=lambda f: bar.update(task, completed=f))
    else:
        r = run_scenario(sc.source, seed=seed, replication=replication)
    if as_json:
        click.echo(r.to_json(indent=2))
    else:
        print_summary(r, sc.data.get("description"))


@main.command()
@click.argument("scenario", metavar="SCENARIO")
def validate(scenario: str) -> None:
    """Check SCENARIO completely without running it."""
    sc = validate_scenario(scenario)
    d = sc.data
    out.print(f"[green]ok[/] {sc.source}: {len(d.get('hosts', []))} hosts, {len(d.get('switches', []))} switches, "
              f"{len(d.get('links', []))} links, {len(d.get('vcs', []))} VCs, {len(d.get('apps', []))} applications")


@main.command()
def scenarios() -> None:
    """List the scenarios shipped with atmlab."""
    from .scenario import bundled, load

    for name in bundled_names():
        desc = load(bundled(name)).data.get("description", "")
        out.print(f"[bold]{name}[/]  {desc}")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option("--quick", is_flag=True, help="A shorter baseline (for smoke tests).")
def bench(as_json: bool, quick: bool) -> None:
    """Measure simulation speed in cell-hops per wall-clock second.

    Runs the bare event loop (no protocol logic) before and after the
    nsource_lan and nsource_wan scenarios (TCP and all metrics on), single
    core, and prints each figure and its ratio to the bare loop.
    """
    if not as_json:
        err.print("running the baseline, nsource_lan, nsource_wan, baseline ...")
    res = bench_mod.run(quick=quick)
    if as_json:
        click.echo(json.dumps(res, indent=2))
        return
    t = Table(title=f"atmlab bench ({res['build']} build, one core)", title_justify="left", title_style="bold")
    for col in ["run", "simulated s", "wall s", "cell-hops", "M cell-hops/s", "x bare loop"]:
        t.add_column(col, justify="left" if col == "run" else "right")
    b = res["baseline"]
    runs = ", ".join(f"{x / 1e6:.2f}" for x in b["runs_cell_hops_per_s"])
    t.add_row("bare event loop", "", "", "", f"{b['cell_hops_per_s'] / 1e6:.2f}", "1.00")
    for key, s in res["scenarios"].items():
        t.add_row(f"{key} ({s['scenario']})", f"{s['sim_s']:g}", f"{s['wall_s']:.3f}", f"{s['cell_hops']:,}",
                  f"{s['cell_hops_per_s'] / 1e6:.2f}", f"{s['vs_baseline']:.2f}")
    out.print(t)
    out.print(f"bare loop before / after: {runs} M cell-hops/s (spread {b['spread']:.1%})")
    if res["build"] != "release":
        err.print("[yellow]warning:[/] the extension is a debug build; figures are not meaningful")


_STUDIES = "\n".join(f"  {k}: {v}" for k, v in reproduce_mod.studies().items())


@main.command(help="Re-run a published study's experiments and compare them with its tables.\n\n"
              f"\b\nSTUDY is one of:\n{_STUDIES}")
@click.argument("study", type=click.Choice(sorted(reproduce_mod.studies())), metavar="STUDY")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the CSV and figures (default: results/STUDY).")
def reproduce(study: str, out_dir: Path | None) -> None:
    out_dir = out_dir or Path("results") / study
    with err.status("simulating ...") as status:
        rep = reproduce_mod.run(study, out_dir, lambda msg: status.update(msg))
    t = Table(title=rep.title, title_justify="left", title_style="bold")
    for col in rep.table.columns:
        t.add_column(str(col), justify="right")
    for _, row in rep.table.iterrows():
        t.add_row(*[_cell(v) for v in row])
    out.print(t)
    if rep.summary:
        out.print(rep.summary)
    for f in rep.files:
        out.print(f"wrote {f}")


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "[red]NO[/]"
    if isinstance(v, float):
        return f"{v:g}"
    return str(v)


if __name__ == "__main__":  # pragma: no cover
    main()
