"""The ``atmlab`` command line.

Every user-facing error (a bad scenario, a missing file, a results database
that cannot be used) is printed as one ``error:`` line on standard error
with exit status 2; no traceback. Set ``ATMLAB_TRACEBACK=1`` to see the
traceback of an unexpected error (a bug to report).
"""

from __future__ import annotations

import errno
import importlib
import json
import os
import sys
import time
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import click

# Start-up time (docs/benchmark.md, "Start-up"): the command line imports
# click, the core and the scenario loader; rich, the tables, the sweep
# machinery (sqlite3, multiprocessing, asyncio), pandas and numpy are
# imported by the commands that use them: rich's parts in the functions that
# draw (the consoles, `escape`, `display` and `termtable` below when first
# used), the rest in the command's body. (`atmlab --version` does not even
# import this module: atmlab/__main__.py.)
from . import reproduce as reproduce_mod
from .bench import MAX_ROUNDS
from .errors import INT64_MAX, AtmlabError, out_of_range, require_extra
from .about import text as version_text

if TYPE_CHECKING:
    import pandas as pd

    from .result import Result
    from .sweep import Progress as SweepProgress
from .scenario import bundled_names, validate as validate_scenario
from .stats import SUMMARY_METRICS

# store.DEFAULT_DB, which the options name: the store (sqlite3, the metrics
# of the core's schema) is imported only by the commands that open one
# (tests/test_startup.py checks that the two agree).
DEFAULT_DB = Path("results") / "atmlab.sqlite"


class _Lazy:
    """A module, or a rich Console, made when first used (start-up time):
    what it is asked for is the real one's."""

    def __init__(self, make: Any) -> None:
        self._make = make
        self._real: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._real is None:
            self._real = self._make()
        return getattr(self._real, name)


def _console(**options: Any) -> Any:
    from rich.console import Console

    return Console(**options)


def escape(text: str) -> str:
    """rich's escape of markup, rich imported when first needed."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


display: Any = _Lazy(lambda: importlib.import_module(".display", __package__))  # sweeps' and results' tables
termtable: Any = _Lazy(lambda: importlib.import_module(".termtable", __package__))

# Not on a terminal (a pipe, a log file, CI), rich would wrap at 80 columns:
# 120 then, unless COLUMNS says otherwise (rich reads it).
_width = None if sys.stdout.isatty() or os.environ.get("COLUMNS", "").isdigit() else 120
out: Any = _Lazy(lambda: _console(highlight=False, width=_width))
err: Any = _Lazy(lambda: _console(stderr=True, highlight=False, width=_width))


class AtmlabGroup(click.Group):
    """Turns atmlab's own errors into one clean line and exit status 2; so
    too a file that cannot be read or written (``--csv`` into a read-only
    folder) and, as a last resort, an unexpected error, which is a bug."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AtmlabError as e:
            lines = e.lines() if hasattr(e, "lines") else [str(e)]  # a sweep's bad points: a line each
            _fail(lines[0], lines[1:])
        except (click.ClickException, click.exceptions.Exit, click.Abort):
            raise  # usage errors and --help: click's own output
        except KeyboardInterrupt:  # Ctrl-C (a run stops within a fraction of a second)
            err.print("[yellow]interrupted[/]")
            sys.exit(130)
        except OSError as e:
            if e.errno == errno.EPIPE:
                raise  # `atmlab results | head`: click ends quietly
            _fail(f"{e.strerror or e}: {e.filename}" if e.filename else str(e))
        except Exception as e:
            if os.environ.get("ATMLAB_TRACEBACK"):
                raise
            _fail(f"internal error (a bug in atmlab; please report it, with ATMLAB_TRACEBACK=1 for the "
                  f"traceback): {type(e).__name__}: {e}")


def _fail(message: str, details: list[str] | None = None) -> NoReturn:
    """One line, whatever the message holds ("[params]" is no markup), and
    the `details` (one item each) below it."""
    err.print(f"[bold red]error:[/] {escape(' '.join(message.split()))}", soft_wrap=True)
    for line in details or []:
        err.print(f"  {escape(' '.join(line.split()))}", soft_wrap=True)
    sys.exit(2)


class WholeNumber(click.ParamType):
    """A whole-number option checked by atmlab's one range check
    (:func:`atmlab.errors.out_of_range`), so that the command line accepts
    and states the same ranges as the API: a seed beyond what the results
    database stores, or a payload beyond what the core takes, is a usage
    error naming the range, not a traceback."""

    name = "integer"

    def __init__(self, lo: int, hi: int = INT64_MAX) -> None:
        self.lo, self.hi = lo, hi

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        number = value
        if isinstance(value, str):
            with suppress(ValueError):  # else out_of_range says what the text should be
                number = int(value.strip())
        problem = out_of_range(number, self.lo, self.hi)
        if problem:
            self.fail(problem, param, ctx)
        return int(number)


SEED = WholeNumber(0)
REPLICATION = WholeNumber(0)
COUNT = WholeNumber(1)  # replications, jobs


@click.group(cls=AtmlabGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(version_text(), prog_name="atmlab", message="%(version)s")
def main() -> None:
    """atmlab: a cell-level laboratory for TCP/IP over ATM networks.

    Run a scenario with `atmlab run FILE`, reproduce a published study with
    `atmlab reproduce STUDY`, measure speed with `atmlab bench`.
    """


def print_summary(r: Result, description: str | None = None, scenario: dict[str, Any] | None = None,
                  all_metrics: bool = False) -> None:
    """The run's summary (:mod:`atmlab.summary`): one section per kind of
    application, per policer and per port; with `all_metrics`, every
    metric of the result after it."""
    from rich.table import Table

    from . import summary

    title, run_line = summary.header(r, description)
    out.print(f"[bold]{escape(title)}[/]")
    out.print(escape(run_line))
    out.print()
    lines = Table.grid(padding=(0, 2))
    for what, value, text in summary.overview(r):
        lines.add_row(what, value, escape(text))
    out.print(lines)
    parts = summary.sections(r, scenario)
    if all_metrics:
        parts.append(summary.all_metrics(r))
    for s in parts:
        _print_table(s.title, [escape(c) for c in s.columns], [[escape(v) for v in row] for row in s.rows],
                     [s.aligned_left(i) for i in range(len(s.columns))])
        if s.note:
            out.print(f"[dim]{escape(s.note)}[/]")


def _set_option(f: Any) -> Any:
    return click.option(
        "--set", "overrides", multiple=True, metavar="KEY=VALUE",
        help="Change the scenario as written, at a key path of the file (repeatable, applied in order): "
             "simulation.duration=\"3 s\", switches[0].port.buffer=\"2000 cells\", params.cat=ubr, "
             "sweep.mss=[512,9140]. VALUE is a TOML value, or text.")(f)


SCENARIO_HELP = ("a scenario file (TOML or JSON), or the name of a bundled scenario (`atmlab scenarios` lists "
                 "them: nsource_lan, examples/voice_cbr, tcp-abr/wan, ...)")


@main.command(help=f"Run SCENARIO and print a summary.\n\nSCENARIO is {SCENARIO_HELP}.")
@click.argument("scenario", metavar="SCENARIO")
@click.option("--seed", type=SEED, default=None,
              help="Master seed (default: the scenario's simulation.seed).")
@click.option("--replication", type=REPLICATION, default=0, show_default=True,
              help="Replication index: independent random streams for the same seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the full result as JSON.")
@click.option("--all-metrics", is_flag=True, help="After the summary, every metric of the result with its meaning.")
@click.option("--pcap", "pcap", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write a packet capture for Wireshark to this directory: one pcap file per direction of "
                   "each link simulation.capture names (every link without it), <from>-<to>.pcap.")
@click.option("--trace", "trace", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write a trace of the run to this file (CSV, or Parquet if it ends .parquet): one record per "
                   "event of the kinds the scenario's [trace] asks for (every kind without it): drops, frames, RM "
                   "cells, switch controllers' decisions, TCP. See docs/experiments.md#traces.")
@_set_option
def run(scenario: str, seed: int | None, replication: int, as_json: bool, all_metrics: bool,
        pcap: Path | None, trace: Path | None, overrides: tuple[str, ...]) -> None:
    from .api import run as run_scenario
    from .scenario import load

    sc = load(scenario, overrides=overrides)  # read and expanded once; the run builds it once
    if err.is_terminal:
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

        with Progress(TextColumn("{task.description}"), BarColumn(), TaskProgressColumn(), TimeElapsedColumn(),
                      console=err, transient=True) as bar:
            task = bar.add_task(f"simulating {sc.name}", total=1.0)
            r = run_scenario(sc, seed=seed, replication=replication, pcap=pcap, trace=trace,
                             progress=lambda f: bar.update(task, completed=f))
    else:
        r = run_scenario(sc, seed=seed, replication=replication, pcap=pcap, trace=trace)
    if pcap is not None:
        err.print(f"packet capture: one pcap per captured link direction in {escape(str(pcap))} "
                  "(docs/experiments.md#packet-capture)")
    if r.trace_file is not None:
        err.print(f"trace: written to {escape(str(r.trace_file))} (atmlab.read_trace reads it; "
                  "docs/experiments.md#traces)")
    elif sc.data.get("trace") is not None:
        err.print("[yellow]note:[/] the scenario's [trace] says what to trace; --trace FILE writes it")
    if as_json:
        click.echo(r.to_json(indent=2))
    else:
        print_summary(r, sc.data.get("description"), sc.data, all_metrics=all_metrics)
        if overrides:
            out.print(f"[dim]with --set {escape(' --set '.join(overrides))}[/]", soft_wrap=True)


@main.command(help="Run real operating-system TCP/IP across SCENARIO's simulated ATM network, in real time "
              "(Linux, root): each external host (hosts[i].external) becomes a network namespace with a TUN "
              "device, its exec applications run there, and the run's summary ends with how far the "
              "simulation fell behind the wall clock. With --replay, a recorded pcap is injected at its "
              f"timestamps instead: no root, no wall clock, deterministic. See docs/emulate.md. SCENARIO is "
              f"{SCENARIO_HELP}.")
@click.argument("scenario", metavar="SCENARIO", required=False)
@click.option("--seed", type=SEED, default=None, help="Master seed (default: the scenario's simulation.seed).")
@click.option("--pcap", "pcap", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write a packet capture (the real packets, LLC/SNAP over SunATM) per captured link direction "
                   "to this directory.")
@click.option("--replay", "replay", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Inject the IPv4 packets of this pcap (raw IP, Ethernet, Linux cooked or SunATM) at their "
                   "timestamps, each at the external host of its source address.")
@click.option("--live-pcap", "live_pcap", type=click.Path(dir_okay=False, path_type=Path), default=None,
              metavar="FIFO",
              help="Write a live capture to this FIFO as the run goes, for `wireshark -k -i FIFO`: the packets one "
                   "external host's kernel sends into the network and those delivered to it (raw IP pcap, kernel "
                   "timestamps). Made if it does not exist; the run waits up to 10 s for a reader.")
@click.option("--live-pcap-host", "live_pcap_host", default=None, metavar="HOST",
              help="The external host whose packets --live-pcap captures (default: the first one).")
@click.option("--cleanup", is_flag=True,
              help="Remove the namespaces left by emulations that crashed, then exit (SCENARIO not needed).")
@click.option("--json", "as_json", is_flag=True, help="Print the result and the lag report as JSON.")
@_set_option
def emulate(scenario: str | None, seed: int | None, pcap: Path | None, replay: Path | None, live_pcap: Path | None,
            live_pcap_host: str | None, cleanup: bool, as_json: bool, overrides: tuple[str, ...]) -> None:
    from . import emulate as emu
    from .result import Result
    from .scenario import load

    if cleanup:
        if os.geteuid() != 0:
            raise emu.EmulationError("--cleanup needs root, as the emulation did")
        removed = emu.cleanup_leftovers()
        out.print(f"removed {len(removed)} namespace(s){': ' + ' '.join(removed) if removed else ''}")
        return
    if scenario is None:
        raise click.UsageError("missing argument SCENARIO")
    if live_pcap is None and live_pcap_host is not None:
        raise click.UsageError("--live-pcap-host names the host of --live-pcap FIFO, which is missing")
    if replay is not None and live_pcap is not None:
        raise click.UsageError("--live-pcap is for live runs; a replay has no wall clock to follow: use --pcap DIR")
    sc = load(scenario, overrides=overrides)
    if replay is not None:
        try:
            raw, counts = emu.replay(sc.to_json(), replay, seed=seed, pcap=pcap)
        except _core_errors() as e:
            raise sc.error(e) from None
        r = Result(raw)
        if as_json:
            click.echo(json.dumps({"result": json.loads(raw), "replay": counts}, indent=2))
            return
        print_summary(r, sc.data.get("description"), sc.data)
        out.print(f"replay: {counts['records']} records, {counts['injected']} injected, {counts['skipped']} "
                  f"skipped (no IPv4 from an external host), {counts['refused']} refused, "
                  f"{counts['delivered']} delivered")
        return
    p = emu.plan(sc.data)
    try:
        live = None if live_pcap is None else emu.LiveOptions(live_pcap, live_pcap_host)
        raw, report, codes = emu.run_live(sc.to_json(), p, seed=seed, pcap=pcap, live=live,
                                          log=lambda m: err.print(escape(m)),
                                          warn=lambda m: err.print(f"[yellow]{escape(m)}[/]", soft_wrap=True))
    except _core_errors() as e:
        raise sc.error(e) from None
    except KeyboardInterrupt:
        raise emu.EmulationError("interrupted: namespaces and devices removed") from None
    r = Result(raw)
    behind = emu.behind_warning(report, report["realtime_s"])
    if "live_pcap" in report:
        err.print(escape(emu.live_summary(report["live_pcap"])), soft_wrap=True)
    if as_json:
        click.echo(json.dumps({"result": json.loads(raw), "lag": report, "exit_codes": codes}, indent=2))
        if behind is not None:
            err.print(f"[yellow]{escape(behind)}[/]", soft_wrap=True)
        return
    print_summary(r, sc.data.get("description"), sc.data)
    out.print("[bold]real time[/]")
    for k, v in emu.lag_lines(report):
        out.print(f"  {k}: {escape(v)}", soft_wrap=True)
    for name, code in codes.items():
        out.print(f"  command {escape(name)}: " + ("still running at the end" if code is None else f"exit {code}"))
    if behind is not None:
        err.print(f"[yellow]{escape(behind)}[/]", soft_wrap=True)


def _core_errors() -> tuple[type[BaseException], ...]:
    from .errors import core_errors

    return core_errors()


@main.command(help="Check SCENARIO completely without running it: the scenario and, for a sweep, every point "
              f"(each built as its run would build it). SCENARIO is {SCENARIO_HELP}.")
@click.argument("scenario", metavar="SCENARIO")
@_set_option
def validate(scenario: str, overrides: tuple[str, ...]) -> None:
    from .sweep import Sweep

    sc = validate_scenario(scenario, overrides=overrides)
    d = sc.data
    size = (f"{len(d.get('hosts', []))} hosts, {len(d.get('switches', []))} switches, {len(d.get('links', []))} "
            f"links, {len(d.get('vcs', []))} VCs, {len(d.get('apps', []))} applications")
    if sc.is_sweep:
        s = Sweep(sc)  # builds every point; every bad one is named
        size += f"; every one of the sweep's {len(s.points)} points is valid"
    out.print(f"[green]ok[/] {escape(sc.source)}: {size}")


@main.command()
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the schema to this file instead of printing it.")
def schema(output: Path | None) -> None:
    """Print the JSON Schema of scenario files, for editors.

    Generated from the core's scenario structs, with templates ([params],
    {name}, repeat) and [sweep]. Point an editor at the file: a TOML
    scenario with a first line `#:schema ./scenario.schema.json` (taplo,
    Even Better TOML), a JSON one with "$schema": "./scenario.schema.json".
    """
    from .schema import text

    doc = text()
    if output is None:
        click.echo(doc, nl=False)
        return
    output.write_text(doc, encoding="utf-8")
    err.print(f"wrote {escape(str(output))}")


@main.command()
@click.option("--payload", type=WholeNumber(0, 2**64 - 1), required=True, help="User data bytes of the message.")
@click.option("--proto", type=click.Choice(["udp", "tcp"]), default="udp", show_default=True,
              help="One UDP datagram, or a TCP transfer in MSS-sized segments (MSS = MTU - 40).")
@click.option("--mtu", type=WholeNumber(1, 2**32 - 1), default=9180, show_default=True, help="IP MTU, bytes.")
@click.option("--encap", type=click.Choice(["null", "llc-snap"]), default="llc-snap", show_default=True,
              help="RFC 1483 encapsulation: VC multiplexing (null) or an 8-byte LLC/SNAP header.")
@click.option("--fragmentation", type=click.Choice(["rfc791", "berkeley"]), default="rfc791", show_default=True,
              help="How the last fragment is sized (berkeley: cut like the others, as SunOS did).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def cells(payload: int, proto: str, mtu: int, encap: str, fragmentation: str, as_json: bool) -> None:
    """Print the IP datagrams and ATM cells a message becomes (AAL5)."""
    from .wire import cells as wire_cells

    try:
        w = wire_cells(payload, proto=proto, mtu=mtu, encap=encap.replace("-", "_"),  # type: ignore[arg-type]
                       fragmentation=fragmentation)  # type: ignore[arg-type]
    except ValueError as e:
        raise click.BadParameter(str(e).split(": ", 1)[-1], param_hint="--" + str(e).split(":", 1)[0]) from None
    if as_json:
        click.echo(json.dumps(w.to_dict(), indent=2))
        return
    unit = "segments" if proto == "tcp" else ("fragments" if w.datagrams > 1 else "datagram")
    out.print(f"{payload:,} bytes of {proto.upper()} at MTU {mtu} ({encap}, {fragmentation}): "
              f"[bold]{w.datagrams:,}[/] IP {unit}, [bold]{w.cells:,}[/] cells "
              f"({w.efficiency:.1%} of the cell bytes are user data)")
    _print_table("", ["IP bytes", "count", "cells each"], [[f"{size:,}", f"{n:,}", str(c)] for size, n, c in w.sizes],
                 [False] * 3)


@main.command()
def scenarios() -> None:
    """List the scenarios shipped with atmlab, each with its description.

    Each runs by its name: `atmlab run examples/voice_cbr`,
    `atmlab sweep ubr-gr/wan`; `atmlab validate NAME` shows its size.
    """
    from .scenario import bundled, load

    rows = []
    for name in bundled_names():
        sc = load(bundled(name))
        desc = str(sc.data.get("description", ""))
        if sc.is_sweep:
            desc += f" [a sweep of {len(list(_points(sc)))} points]"
        rows.append([escape(name), escape(desc)])
    _print_table(f"{len(rows)} bundled scenarios (atmlab run NAME)", ["name", "description"], rows, [True, True])


def _points(sc: Any) -> list[Any]:
    from .expand import points

    return points(sc.source, sc.template)


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
@click.option("--quick", is_flag=True, help="A shorter baseline, each command timed once (for smoke tests).")
@click.option("--overhead/--no-overhead", default=True, show_default=True,
              help="Also time whole commands: start-up, a 1 ms and a 1 s run, a 1-run sweep, reproduce kpn --quick.")
@click.option("--rounds", type=WholeNumber(1, MAX_ROUNDS), default=1, show_default=True,
              help="Measure the bare loop and the scenarios this many times over and print the medians (and "
                   "the range of the ratios): the figures to compare two builds with on a busy machine.")
@click.option("--algorithms", is_flag=True,
              help="Also run tcp-abr/wan (probes off) with each ABR switch algorithm of the core at every switch "
                   "port, and print each one's speed against ERICA+'s on the same scenario.")
def bench(as_json: bool, quick: bool, overhead: bool, rounds: int, algorithms: bool) -> None:
    """Measure simulation speed in cell-hops per wall-clock second, and the
    time of whole commands around small runs.

    Runs the bare event loop (no protocol logic) before and after the
    nsource_lan and nsource_wan scenarios (TCP and all metrics on),
    tcp-abr/wan (97-0177R2's WAN: TCP over ABR with ERICA+ and video),
    97-0424's WAN with a guaranteed rate under ON/OFF VBR (ubr-gr/wan),
    EXPERT's bottleneck and 97-0177R2's satellite case (tcp-abr/sat_sat),
    single core, and prints each figure and its ratio to the bare loop.
    Then times, each in a new process, `atmlab --version`, `atmlab run` of
    a 1-millisecond voice scenario, `atmlab run` and a 1-run `atmlab sweep`
    of a 1-second one, and `atmlab reproduce kpn --quick` with one and two
    workers (the median of five, one for the reproductions). With --rounds N the bare loop and the
    scenarios are measured N times over and the medians printed. With --algorithms, 97-0177R2's WAN
    with each ABR switch algorithm in place of ERICA+ too, each with its speed over ERICA+'s.
    """
    from . import bench as bench_mod

    if not as_json:
        err.print(f"running the baseline, {', '.join(c.scenario for c in bench_mod.SCENARIOS.values())}, baseline"
                  + (f", {rounds} times" if rounds > 1 else "")
                  + (", then the commands ..." if overhead else " ..."))
    res = bench_mod.run(quick=quick, rounds=rounds, algorithms=algorithms)
    if overhead:
        res["commands"] = bench_mod.overhead(quick=quick)
    if as_json:
        click.echo(json.dumps(res, indent=2))
        return
    b = res["baseline"]
    runs = ", ".join(f"{x / 1e6:.2f}" for x in b["runs_cell_hops_per_s"])
    rows = [["bare event loop", "", "", "", f"{b['cell_hops_per_s'] / 1e6:.2f}", "1.00"]]
    for key, s in res["scenarios"].items():
        if key.startswith("abr:"):
            continue  # the algorithms' table below
        ratio = f"{s['vs_baseline']:.2f}"
        if rounds > 1:
            ratio += f" ({min(s['runs_vs_baseline']):.2f}-{max(s['runs_vs_baseline']):.2f})"
        rows.append([f"{key} ({s['scenario']})", f"{s['sim_s']:g}", f"{s['wall_s']:.3f}", f"{s['cell_hops']:,}",
                     f"{s['cell_hops_per_s'] / 1e6:.2f}", ratio])
    _print_table(f"atmlab bench ({res['build']} build, one core"
                 + (f"; medians of {rounds} rounds" if rounds > 1 else "") + ")",
                 ["run", "simulated s", "wall s", "cell-hops", "M cell-hops/s", "x bare loop"],
                 [[escape(v) for v in r] for r in rows], [True] + [False] * 5)
    algs = [(key.removeprefix("abr:"), s) for key, s in res["scenarios"].items() if key.startswith("abr:")]
    if algs:
        _print_table(f"ABR switch algorithms on {bench_mod.ALGORITHM_SCENARIO}, probes off (x ERICA+: its speed in "
                     "cell-hops/s over ERICA+'s in the same round)",
                     ["algorithm", "wall s", "cell-hops", "M cell-hops/s", "x bare loop", "x ERICA+"],
                     [[escape(alg), f"{s['wall_s']:.3f}", f"{s['cell_hops']:,}", f"{s['cell_hops_per_s'] / 1e6:.2f}",
                       f"{s['vs_baseline']:.2f}", f"{s.get('vs_reference', float('nan')):.2f}"] for alg, s in algs],
                     [True] + [False] * 5)
    out.print(f"bare loop {'before / after' if rounds == 1 else 'runs'}: {runs} M cell-hops/s "
              f"(spread {b['spread']:.1%})")
    m = res["machine"]
    caches = ", ".join(f"{level} {_kib(size)}" for level, size in m["caches"].items())
    out.print(f"machine: {m['cpu']}, {m['logical_cpus']} logical CPUs" + (f"; caches {caches}" if caches else ""))
    out.print(f"core: {res['build']} build" + (f" with profile {res['pgo_profile']}" if res["pgo_profile"] else
                                               ", no profile (pgo/: docs/architecture.md)"))
    if overhead:
        _print_table("whole commands (wall time, median)", ["command", "wall s", "runs (s)"],
                     [[escape(label.replace("SMALL", "(1 s voice scenario)").replace("TINY", "(1 ms voice scenario)")),
                       f"{m['wall_s']:.2f}",
                       ", ".join(f"{x:.2f}" for x in m["runs_wall_s"])] for label, m in res["commands"].items()],
                     [True, False, False])
    if res["build"] != "release":
        err.print("[yellow]warning:[/] the extension is a debug build; figures are not meaningful")


def _kib(size: str) -> str:
    """A cache size as sysfs writes it ("2048K") in the larger unit where it
    divides ("2 MiB"); anything else as it is."""
    if size.endswith("K") and size[:-1].isdigit():
        k = int(size[:-1])
        return f"{k // 1024} MiB" if k >= 1024 and k % 1024 == 0 else f"{k} KiB"
    return size


def _ci_metric(ctx: click.Context, param: click.Parameter, name: str) -> str:
    """--ci-metric, checked before anything runs (a name that is no metric
    would run every point to the replication cap)."""
    from .sweep import ci_metric_problem

    if (problem := ci_metric_problem(name)) is not None:
        raise click.BadParameter(problem, ctx, param)
    return name


@main.command(help="Run every point of SCENARIO's [sweep], replicated, into a results database.\n\n"
              "Finished runs are skipped, so an interrupted sweep resumes where it stopped; a failed run is "
              "recorded with its error and does not stop the sweep. SCENARIO is " + SCENARIO_HELP + ".")
@click.argument("scenario", metavar="SCENARIO")
@click.option("-r", "--replications", type=COUNT, default=1, show_default=True,
              help="Runs per point, with independent random streams.")
@click.option("--seed", type=SEED, default=None,
              help="Master seed (default: the scenario's simulation.seed).")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB, show_default=True,
              help="Results database (SQLite; created if missing).")
@click.option("-j", "--jobs", type=COUNT, default=None,
              help="Worker processes (default: one per core; 1 runs in this process).")
@click.option("--dask", metavar="ADDRESS|local", default=None,
              help="Run on a Dask distributed scheduler at ADDRESS, or on a LocalCluster with 'local'.")
@click.option("--ci-target", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Add replications until the 95%% CI half-width of --ci-metric is at most this.")
@click.option("--ci-metric", default="efficiency", show_default=True, callback=_ci_metric,
              help="The metric --ci-target applies to (a run-level metric: a column of `atmlab results`).")
@click.option("--max-replications", type=COUNT, default=None,
              help="The cap for --ci-target.  [default: 30, or --replications if more]")
@click.option("--dry-run", is_flag=True,
              help="Check every point (built as its run would build it) and list the points and runs; run nothing.")
@_set_option
def sweep(scenario: str, replications: int, seed: int | None, db: Path, jobs: int | None, dask: str | None,
          ci_target: float | None, ci_metric: str, max_replications: int | None, dry_run: bool,
          overrides: tuple[str, ...]) -> None:
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    from .sweep import Sweep

    if ci_target is not None and max_replications is not None and max_replications < replications:
        raise click.BadParameter("is below --replications", param_hint="--max-replications")
    s = Sweep(scenario, replications=replications, seed=seed, ci_target=ci_target, ci_metric=ci_metric,
              max_replications=max_replications, overrides=overrides)
    out.print(f"[bold]{escape(s.label)}[/]: {len(s.points)} points x {s.replications} replications = "
              f"{len(s.points) * s.replications} runs (seed {s.seed})"
              + (f"; until the 95% CI of {ci_metric} is within +/-{ci_target:g} (at most {s.max_replications})"
                 if ci_target else ""))
    if dry_run:
        _print_table("", [escape(h) for h in ("point", *s.param_names, "scenario hash")],
                     [[escape(v) for v in (str(p.index), *[str(p.params[k]) for k in s.param_names],
                                           p.scenario_hash)] for p in s.points],
                     [False, *[True] * len(s.param_names), True])
        return
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[failed]}"),
               TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn())
    with Progress(*columns, console=err, transient=not err.is_terminal, disable=not err.is_terminal) as bar:
        task = bar.add_task("runs", total=None, failed="")

        def update(p: SweepProgress) -> None:
            bar.update(task, total=p.total, completed=p.done,
                       failed=f"[red]{p.failed} failed[/]" if p.failed else "")
            if p.last is not None and p.last.status != "ok":
                spec = p.last.spec
                err.print(f"[red]failed[/] point {spec.point} {spec.params} replication "
                          f"{spec.replication}: {p.last.error}", soft_wrap=True)

        outcome = s.run(db, jobs=jobs, dask=dask, progress=update)
    out.print(f"{outcome.ran} runs done ({outcome.failed} failed), {outcome.skipped} already in {db}; "
              f"the sweep has {outcome.runs} finished runs. Executor: {outcome.executor}.")
    if outcome.interrupted:
        err.print("[yellow]interrupted:[/] every finished run is saved; run the same command to resume.")
        sys.exit(130)
    summary = s.summary(db, metrics=list(SUMMARY_METRICS))
    if not summary.empty:
        _print_summary(summary, s.param_names, summary.attrs.get("units"))
    if outcome.failed:
        sys.exit(1)


def _which_sweep(db: Path, which: str | None, every: bool) -> tuple[int | None, str]:
    """The sweep `results` and `report` work on (its id): `which` (an id
    or a name: the latest sweep of that name), every one (`every`: None),
    or the one used last; and a note saying which, when the database holds
    more than one. A sweep is one scenario's points: an edited scenario run
    under its old name is another sweep, never pooled with the old one."""
    from .errors import UnknownSweep
    from .store import Store

    if which and every:
        raise click.UsageError("give --sweep NAME|ID or --all, not both")
    with Store(db) as store:
        info = store.sweep_info(differs=False)
        if every:
            return None, f"all {len(info)} sweeps, each on its own" if len(info) > 1 else ""
        if not info:
            return None, ""
        try:
            chosen = store.find_sweep(which if which is not None else "latest")
        except UnknownSweep as e:
            raise AtmlabError(str(e)) from None
    same = [i for i in info if i.name == chosen.name]
    notes = []
    if which is None and len(info) > 1:
        notes.append(f"sweep {chosen.label}, the latest of {len(info)} in {db} (--sweep NAME|ID for another, "
                     "--all for every one; atmlab results --list lists them)")
    if len(same) > 1:
        others = ", ".join(f"#{i.sweep_id}" for i in same if i.sweep_id != chosen.sweep_id)
        notes.append(f"{len(same)} sweeps are named {chosen.name}, each another scenario, never pooled: this is "
                     f"#{chosen.sweep_id}; the others are {others} (--sweep ID; --list says what differs)")
    return chosen.sweep_id, "\n".join(notes)


def _print_sweep_list(db: Path) -> None:
    from .store import Store

    with Store(db) as store:
        info = store.sweep_info()
    _print_table(f"{len(info)} sweep{'s' if len(info) != 1 else ''} in {db}, the one used last at the end",
                 ["id", "sweep", "created (UTC)", "points", "runs", "failed", "last run finished (UTC)",
                  "differs from the sweep of that name before it"],
                 [[f"#{i.sweep_id}", escape(i.name), (i.created_at or "")[:19].replace("T", " "),
                   display.number(i.points), display.number(i.runs), display.number(i.runs - i.ok),
                   (i.last_finished_at or "")[:19].replace("T", " "),
                   escape(i.differs + (f" (with --set {' '.join(i.overrides)})" if i.overrides else ""))]
                  for i in info],
                 [False, True, True, False, False, False, True, True])


def _mixed_builds(df: "pd.DataFrame") -> str:
    """A warning if the runs shown come from more than one atmlab build."""
    if df.empty or "git_commit" not in df:
        return ""
    builds = df[["atmlab_version", "git_commit"]].fillna("?").drop_duplicates()
    if len(builds) < 2:
        return ""
    names = ", ".join(f"{v} at {str(c)[:10]}" for v, c in builds.itertuples(index=False))
    return f"warning: these runs come from {len(builds)} atmlab builds ({names}): if the model changed between them, " \
           "re-run into a new database"


@main.command(help="List the runs of a sweep in a results database, or export them (one row per run, in point "
              "order). By default the sweep used last; --sweep NAME|ID or --all for others, --list to list them. "
              "A sweep is one scenario's points: a scenario edited and run again under its old name is a new "
              "sweep, never pooled with the old one.")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=DEFAULT_DB, show_default=True,
              help="Results database.")
@click.option("--sweep", "sweep_name", default=None, metavar="NAME|ID",
              help="This sweep rather than the latest: its id (--list), or its name for the latest of that name.")
@click.option("--all", "every", is_flag=True, help="Every sweep in the database.")
@click.option("--list", "listing", is_flag=True,
              help="List the sweeps in the database (id, dates, runs, what differs from the one of the same name "
                   "before) and stop.")
@click.option("--status", type=click.Choice(["ok", "failed"]), default=None, help="Only runs with this status.")
@click.option("--csv", "csv_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the table as CSV (numbers in base units; a swept quantity's unit in its header).")
@click.option("--parquet", "parquet_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the table as Parquet (needs the parquet extra: pip install 'atmlab[parquet]').")
@click.option("--all-metrics", is_flag=True, help="Also per-connection, per-flow and per-port metrics.")
def results(db: Path, sweep_name: str | None, every: bool, listing: bool, status: str | None,
            csv_path: Path | None, parquet_path: Path | None, all_metrics: bool) -> None:
    if listing:
        _print_sweep_list(db)
        return
    if parquet_path:
        require_extra("parquet", "--parquet", "pyarrow", "fastparquet")
    from .sweep import results as load_results

    chosen, note = _which_sweep(db, sweep_name, every)
    df = load_results(db, sweep=chosen, status=status, all_metrics=all_metrics)
    if note:
        out.print(escape(note), soft_wrap=True)
    mixed = _mixed_builds(df)
    if mixed:
        err.print(f"[yellow]{escape(mixed)}[/]", soft_wrap=True)
    if csv_path or parquet_path:
        from .files import write_atomically  # a full disk leaves no part of a file, and names it

        table = _with_units(df)
        if csv_path:
            write_atomically(csv_path, lambda tmp: table.to_csv(tmp, index=False))
            out.print(f"wrote {len(df)} runs to {csv_path}")
        if parquet_path:
            write_atomically(parquet_path, lambda tmp: table.to_parquet(tmp, index=False))
            out.print(f"wrote {len(df)} runs to {parquet_path}")
        return
    label = f" of sweep {df['sweep'].iloc[0]} #{chosen}" if chosen is not None and not df.empty else ""
    _print_runs(df, title=f"{len(df)} runs{label} in {db}; --csv or --parquet for every column")


def _with_units(df: "pd.DataFrame") -> "pd.DataFrame":
    """The exported table: a swept quantity's column says its unit
    (``buffer (cells)``, ``delay (s)``); the values stay numbers in base units."""
    units = df.attrs.get("units", {})
    return df.rename(columns={c: display.header(c, u) for c, u in units.items() if c in df.columns})


def _print_runs(df: "pd.DataFrame", title: str) -> None:
    """The runs as a table that fits the terminal: identity, swept values
    and the main metrics, each column scaled to one SI prefix."""
    from .sweep import RESULT_COLUMNS

    params = [c for c in df.columns if c not in RESULT_COLUMNS and "." not in c]
    metric_cols = [m for m in SUMMARY_METRICS if m in df and df[m].notna().any()]
    if "tcp_goodput_bps" in metric_cols and "efficiency" not in metric_cols:
        metric_cols.remove("tcp_goodput_bps")  # no TCP in these runs: a column of zeros says nothing
    units = {**df.attrs.get("units", {}), **df.attrs.get("metric_units", {})}
    failed = "status" in df and (df["status"] != "ok").any()
    cols: list[tuple[str, list[str]]] = []
    if "sweep_id" in df and df["sweep_id"].nunique() > 1:
        cols.append(("sweep", [f"{n} #{i}" for n, i in zip(df["sweep"], df["sweep_id"], strict=True)]))
    cols += [("run", [display.number(v) for v in df["run_id"]]), ("point", [display.number(v) for v in df["point"]]),
             ("rep", [display.number(v) for v in df["replication"]])]
    for c in params:
        values, shown = display.column(df[c].tolist(), units.get(c))
        cols.append((display.header(c, shown), values))
    for m in metric_cols:
        values, shown = display.column(df[m].tolist(), units.get(m))
        cols.append((display.metric_header(m, shown), values))
    if failed:
        cols.append(("status", df["status"].astype(str).tolist()))
        cols.append(("error", df["error"].fillna("").astype(str).tolist()))
    _print_table(title, [escape(name) for name, _ in cols],
                 [[escape(values[i]) for _, values in cols] for i in range(len(df))],
                 [name in ("sweep", "status", "error") for name, _ in cols])


@main.command(help="Write figures (PNG) and a self-contained HTML page for a sweep of a results database: by "
              "default the sweep used last; --sweep NAME|ID or --all for others (each sweep on its own: runs of "
              "two scenarios are never averaged together).")
@click.option("--db", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=DEFAULT_DB,
              show_default=True, help="Results database.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for the figures and index.html.")
@click.option("--sweep", "sweep_name", default=None, metavar="NAME|ID",
              help="This sweep rather than the latest: its id (atmlab results --list), or its name for the latest "
                   "of that name.")
@click.option("--all", "every", is_flag=True, help="Every sweep in the database, each in its own section.")
@click.option("--x", default=None, help="Parameter on the x axis (default: the first swept).")
@click.option("--group", default=None, help="Parameter giving one line each (default: the second swept).")
@click.option("--metric", "metrics", multiple=True,
              help="Metric to plot (repeatable; default: the main ones). A per-item metric names its item "
                   "(connections.tcp0.goodput_bps) or all of them with * (connections.*.goodput_bps); an unknown "
                   "name is an error that lists the valid ones.")
@click.option("--run", "run_id", type=WholeNumber(1), default=None, help="Plot this run's time series.")
def report(db: Path, out_dir: Path, sweep_name: str | None, every: bool, x: str | None, group: str | None,
           metrics: tuple[str, ...], run_id: int | None) -> None:
    chosen, note = _which_sweep(db, sweep_name, every)
    from . import report as report_mod  # matplotlib: imported only when needed

    if note:
        out.print(escape(note), soft_wrap=True)
    try:
        page = report_mod.build(db, out_dir, sweep=chosen, x=x, group=group, metrics=list(metrics) or None,
                                run_id=run_id)
    except KeyError as e:
        raise AtmlabError(str(e.args[0])) from None
    figs = report_mod.figure_paths(page)
    out.print(f"wrote {page} and {len(figs)} figures")


def _print_summary(summary: "pd.DataFrame", params: list[str], units: dict[str, str] | None = None) -> None:
    """Per point: the parameters, the number of runs, and each metric as
    mean +/- CI half-width, scaled to one SI prefix per column."""
    units = units or {}
    metrics = [m for m in SUMMARY_METRICS if f"{m}_mean" in summary and summary[f"{m}_mean"].notna().any()]
    if "tcp_goodput_bps" in metrics and "efficiency" not in metrics:
        metrics.remove("tcp_goodput_bps")  # no TCP: a column of zeros says nothing
    cols: list[tuple[str, list[str]]] = []
    for c in params:
        if c in summary:
            values, shown = display.column(summary[c].tolist(), units.get(c))
            cols.append((display.header(c, shown), values))
    cols.append(("runs", [display.number(v) for v in summary["runs"]]))
    for m in metrics:
        means, cis = summary[f"{m}_mean"].tolist(), summary[f"{m}_ci95"].tolist()
        factor, shown = display.scale(means, _metric_unit(m))
        cells = []
        for mean, ci in zip(means, cis, strict=True):
            text = display.number(mean * factor)
            if text and ci == ci:
                text += f" +/- {display.number(ci * factor, 2)}"
            cells.append(text)
        cols.append((display.metric_header(m, shown), cells))
    _print_table("per point: mean +/- 95% CI half-width", [escape(name) for name, _ in cols],
                 [[escape(values[i]) for _, values in cols] for i in range(len(summary))], [False] * len(cols))


def _metric_unit(m: str) -> str | None:
    from .metrics import unit

    return unit(m)


def _print_frame(df: "pd.DataFrame", title: str) -> None:
    """A data frame as a table (:func:`_print_table`): numbers to the right,
    text to the left, and the underscores of names read as spaces so that
    they wrap between words (``max_queue_cells`` as "max queue cells"; the
    CSVs keep the names). The first column, which names the rows (a claim,
    a study), stays as written."""
    from pandas.api.types import is_numeric_dtype

    headers = [escape(str(c).replace("_", " ")) for c in df.columns]
    left = [not (is_numeric_dtype(df[c]) and not df[c].dtype == bool) for c in df.columns]
    rows = [[_cell(v) if i == 0 else _cell(v).replace("_", " ") for i, v in enumerate(row)]
            for row in df.itertuples(index=False)]
    _print_table(title, headers, rows, left)


def _print_table(title: str, headers: list[str], rows: list[list[str]], left: list[bool]) -> None:
    """A table on standard output, laid out by :func:`atmlab.termtable.print_table`."""
    termtable.print_table(out, title, headers, rows, left)


_STUDIES = "\n".join(f"  {e.id}" + (f" ({', '.join(e.aliases)})" if e.aliases else "") + f": {e.title}"
                     for e in reproduce_mod.REGISTRY)


@main.command(help="Re-run a published study's experiments and compare them with its published values.\n\n"
              f"\b\nSTUDY is one of (or an alias in brackets):\n{_STUDIES}\n  all: every study in turn\n\n"
              "Prints the comparison (published value, simulated value with its 95% interval, tolerance, "
              "verdict) and the study's claims, writes CSVs and the study's figures. Simulation runs are stored "
              "in the results database, so an interrupted reproduction resumes where it stopped.")
@click.argument("study", type=click.Choice([*reproduce_mod.names(), "all"]), metavar="STUDY")
@click.option("--out", "out_path", type=click.Path(path_type=Path), default=None,
              help="Folder for the CSVs and figures, or the main CSV's file name (default: results/STUDY; with "
                   "'all', a folder per study under this one).")
@click.option("--quick", is_flag=True,
              help="A small subset with short runs (a smoke test; not comparable with the study).")
@click.option("-r", "--replications", type=COUNT, default=None,
              help="Runs per configuration, with independent random streams (adds confidence intervals); "
                   "default: the study's (kpn, bundling 1; 97-0177 5; 97-0424 6; expert 10), 1 with --quick.")
@click.option("--seed", type=SEED, default=None,
              help="Master seed (default: each scenario's simulation.seed).")
@click.option("--db", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Results database (SQLite; created if missing). Default: atmlab.sqlite in the study's folder "
                   "(results/STUDY/atmlab.sqlite), apart from your own sweeps.")
@click.option("-j", "--jobs", type=COUNT, default=None,
              help="Worker processes (default: one per core; 1 runs in this process).")
@click.option("--ci-target", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Double the replications until every compared value's 95%% interval is at most this fraction "
                   "of its tolerance (e.g. 0.25), up to --max-replications; stored runs are reused.")
@click.option("--max-replications", type=COUNT, default=10, show_default=True,
              help="The most replications --ci-target may ask for.")
@click.option("--open-choices", is_flag=True,
              help="Also run every configuration under each alternative of the study's open choices (its page's "
                   "\"Open choices\"), one at a time, and report each compared value's range over them beside the "
                   "verdict (the comparison CSV's open_* columns). The verdicts stay the chosen model's.")
@click.option("--algorithm", default=None, metavar="NAME",
              help="Put this ABR switch algorithm (on its defaults) at every switch port in place of the study's "
                   "own, e.g. tcp-abr --algorithm capc (erica, efci, eprca, aprc, capc, osu, charny); the "
                   "published values stay the study's. Default folder results/STUDY-NAME.")
def reproduce(study: str, out_path: Path | None, quick: bool, replications: int | None, seed: int | None,
              db: Path | None, jobs: int | None, ci_target: float | None, max_replications: int,
              open_choices: bool, algorithm: str | None) -> None:
    from .executors import make

    target = (ci_target, max_replications)
    if algorithm is not None and study == "all":
        raise click.UsageError("--algorithm applies to one study at a time ("
                               + ", ".join(reproduce_mod.switch_algorithm_studies()) + "), not to all")
    executor = make(jobs)  # one set of workers for every sweep of the command, started when first needed
    try:
        if study == "all":
            _reproduce_all(out_path or Path("results"), quick, replications, seed, db, executor, target, open_choices)
            return
        entry = reproduce_mod.entry(study)
        folder = entry.id if algorithm is None else f"{entry.id}-{algorithm}"
        rep = _reproduce_one(entry, out_path or Path("results") / folder, quick, replications, seed, db, executor,
                             target, open_choices, algorithm)
    finally:
        executor.close()
    _print_reproduction(rep)
    if rep.failures:
        err.print(f"{len(rep.failures)} runs failed; their configurations are missing from the table.")
        sys.exit(1)


def _reproduce_one(entry: Any, out_path: Path, quick: bool, replications: int | None, seed: int | None,
                   db: Path | None, executor: Any, target: tuple[float | None, int] = (None, 10),
                   open_choices: bool = False, algorithm: str | None = None) -> Any:
    """Runs one study with a progress bar; exits 130 if interrupted."""
    reps = replications if replications is not None else reproduce_mod.default_replications(entry.id, quick)
    options = reproduce_mod.Options(out=out_path, quick=quick, replications=reps, db=db, jobs=executor.jobs,
                                    seed=seed, ci_target=target[0], max_replications=max(target[1], reps),
                                    open_choices=open_choices, algorithm=algorithm, executor=executor)
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                               TimeRemainingColumn)

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("eta"), TimeRemainingColumn())
    with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as bar:
        task = bar.add_task(f"{entry.id}: starting", total=None)

        def update(message: str, done: int | None = None, total: int | None = None) -> None:
            bar.update(task, description=message, completed=done or 0, total=total)

        t0 = time.perf_counter()
        rep = reproduce_mod.run(entry.id, options, update)
        rep.agreement.wall_s = rep.agreement.wall_s or time.perf_counter() - t0
    if rep.interrupted:
        err.print("[yellow]interrupted:[/] every finished run is saved in "
                  f"{options.db}; run the same command to resume.")
        sys.exit(130)
    return rep


def _print_reproduction(rep: Any) -> None:
    _print_frame(rep.table, title=rep.title)
    if rep.summary:
        out.print(rep.summary, soft_wrap=True)
    for title, frame in rep.extra:
        if not frame.empty:
            _print_frame(frame, title=title)
    for f in rep.files:
        out.print(f"wrote {f}")
    for failure in rep.failures:
        err.print(f"[red]failed[/] {failure}", soft_wrap=True)


def _reproduce_all(out_dir: Path, quick: bool, replications: int | None, seed: int | None, db: Path | None,
                   executor: Any, target: tuple[float | None, int] = (None, 10), open_choices: bool = False) -> None:
    """Every study in turn, each into its own folder under `out_dir`, then
    one agreement summary."""
    rows = []
    failed = 0
    for entry in reproduce_mod.REGISTRY:
        rep = _reproduce_one(entry, out_dir / entry.id, quick, replications, seed, db, executor, target,
                             open_choices)
        out.print(f"[bold]{rep.title}[/]")
        if rep.summary:
            out.print(rep.summary, soft_wrap=True)
        failed += len(rep.failures)
        a = rep.agreement
        rows.append({"study": entry.id, "values compared": a.compared, "within tolerance": a.within,
                     "claims evaluated": a.claims, "claims held": a.held, "runs": a.runs,
                     "wall s": round(a.wall_s, 1)})
    _print_frame(pd_frame(rows), title="agreement with the published studies"
                 + (" (--quick: not comparable)" if quick else ""))
    if failed:
        err.print(f"{failed} runs failed; their configurations are missing from the tables.")
        sys.exit(1)


def pd_frame(rows: list[dict[str, Any]]) -> "pd.DataFrame":
    import pandas as pd

    return pd.DataFrame(rows)


def _cell(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "[red]NO[/]"
    if isinstance(v, float):
        return "" if v != v else f"{v:.4g}"
    if v is None:
        return ""
    return escape(str(v))  # text as it is, not rich markup


if __name__ == "__main__":  # pragma: no cover
    main()
