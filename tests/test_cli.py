"""The command line, as a user runs it: summaries, JSON, and clean errors."""

from __future__ import annotations

import json

import pytest


def test_run_prints_a_summary(cli):
    p = cli("run", "scenarios/nsource_lan.toml")
    assert p.returncode == 0, p.stderr
    assert "efficiency" in p.stdout and "fairness" in p.stdout
    assert "tcp0" in p.stdout and "sw1->sw2" in p.stdout


def test_run_json_is_byte_identical_for_the_same_seed(cli):
    a = cli("run", "nsource_lan", "--json", "--seed", "7")
    b = cli("run", "nsource_lan", "--json", "--seed", "7")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    doc = json.loads(a.stdout)
    assert {"efficiency", "fairness", "connections"} <= doc.keys()
    assert doc["seed"] == 7
    assert len(doc["connections"]) == 5


def test_validate(cli):
    p = cli("validate", "nsource_wan")
    assert p.returncode == 0
    assert "ok" in p.stdout and "10 hosts" in p.stdout


def test_scenarios_lists_bundled(cli):
    from atmlab.scenario import bundled_names

    p = cli("scenarios")
    assert p.returncode == 0
    for name in bundled_names():  # every one, with its description (the base point's: no "{...}" left)
        assert name in p.stdout
    assert "examples/voice_cbr" in p.stdout and "Voice on CBR" in p.stdout
    assert "Study 000: 1 TCP" in p.stdout and "{n_tcp}" not in p.stdout


def test_a_bundled_scenario_in_a_folder_runs_by_name(cli, tmp_path):
    p = cli("validate", "examples/voice_cbr", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "ok" in p.stdout and "voice_cbr.toml" in p.stdout


BAD_INPUTS = {
    "missing file": (None, "no such file"),
    "malformed TOML": ("[simulation\nduration = ", "malformed TOML"),
    "unknown key": ('[simulation]\nduration = "1 s"\ncolour = "red"\n', "unknown field `colour`"),
    "negative rate": (
        '[simulation]\nduration = "1 s"\n[[hosts]]\nname = "a"\n[[hosts]]\nname = "b"\n'
        '[[links]]\nbetween = ["a", "b"]\nrate = "-5 Mbit/s"\ndelay = "1 us"\n',
        "links[0].rate",
    ),
    "zero-cell buffer": (
        '[simulation]\nduration = "1 s"\n[[hosts]]\nname = "a"\n[[switches]]\nname = "s"\n'
        'port = { buffer = "0 cells" }\n[[links]]\nbetween = ["a", "s"]\nrate = "1 Mbit/s"\ndelay = "1 us"\n',
        "switches[0].port.buffer: must be at least 1 cell",
    ),
    "VC to a non-existent port": (
        '[simulation]\nduration = "1 s"\n[[hosts]]\nname = "a"\n[[hosts]]\nname = "b"\n[[switches]]\nname = "s"\n'
        'port = { buffer = "10 cells" }\n[[links]]\nbetween = ["a", "s"]\nrate = "1 Mbit/s"\ndelay = "1 us"\n'
        '[[vcs]]\nname = "v"\npath = ["a", "s", "b"]\n',
        "vcs[0].path: no link between s and b",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
@pytest.mark.parametrize("command", ["run", "validate"])
def test_bad_input_is_one_clear_error_line(cli, tmp_path, case, command):
    text, words = BAD_INPUTS[case]
    path = tmp_path / "scenario.toml"
    if text is not None:
        path.write_text(text)
    p = cli(command, str(path))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr and "panicked" not in p.stderr
    assert words in p.stderr, p.stderr
    assert str(path) in p.stderr
    assert p.stderr.strip().startswith("error:")


def test_bad_options_are_usage_errors(cli):
    p = cli("run", "nsource_lan", "--seed", "-3")
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    p = cli("reproduce", "nonsense")
    assert p.returncode == 2
    assert "Traceback" not in p.stderr


def test_bench_json_has_the_documented_shape(cli):
    p = cli("bench", "--json", "--quick")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["build"] == "release"
    assert doc["pgo_profile"] is None or doc["pgo_profile"].endswith(".profdata")
    assert doc["machine"]["cpu"] and doc["machine"]["logical_cpus"] >= 1
    assert doc["baseline"]["cell_hops_per_s"] > 1e6
    for key in ("lan", "wan"):
        s = doc["scenarios"][key]
        assert s["cell_hops_per_s"] > 1e6
        assert s["sim_s"] == {"lan": 10, "wan": 20}[key]
        assert s["wall_s"] > 0
    commands = doc["commands"]
    assert list(commands) == ["atmlab --version", "atmlab run TINY", "atmlab run SMALL", "atmlab sweep SMALL (1 run)",
                              "atmlab reproduce kpn --quick -j1", "atmlab reproduce kpn --quick -j2"]
    for m in commands.values():
        assert len(m["runs_wall_s"]) == 1 and m["wall_s"] == m["runs_wall_s"][0] > 0
    # Starting atmlab costs less than running anything, and a reproduction more than a single run.
    assert commands["atmlab --version"]["wall_s"] < commands["atmlab run TINY"]["wall_s"]
    assert commands["atmlab --version"]["wall_s"] < commands["atmlab sweep SMALL (1 run)"]["wall_s"]
    assert commands["atmlab run SMALL"]["wall_s"] < commands["atmlab reproduce kpn --quick -j1"]["wall_s"]


def test_bench_rounds_report_the_median_of_each_rounds_ratio(cli):
    p = cli("bench", "--json", "--quick", "--no-overhead", "--rounds", "3")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["rounds"] == 3 and len(doc["baseline"]["runs_cell_hops_per_s"]) == 6
    for s in doc["scenarios"].values():
        ratios, rates = s["runs_vs_baseline"], s["runs_cell_hops_per_s"]
        assert len(ratios) == len(rates) == 3
        assert s["vs_baseline"] == sorted(ratios)[1] and s["cell_hops_per_s"] == sorted(rates)[1]
    for bad in ("0", "101", "x"):
        p = cli("bench", "--rounds", bad)
        assert p.returncode == 2 and "--rounds" in p.stderr and "Traceback" not in p.stderr
    from atmlab import bench
    from atmlab.errors import ArgumentError

    with pytest.raises(ArgumentError, match="rounds must be a whole number from 1 to 100"):
        bench.run(rounds=0)


def test_bench_names_the_machine_from_cpuinfo_and_sysfs(tmp_path):
    from atmlab.bench import machine

    proc = tmp_path / "cpuinfo"
    proc.write_text("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Example CPU @ 2.60GHz\n"
                    "processor\t: 1\nmodel name\t: Example CPU @ 2.60GHz\n")
    caches = tmp_path / "cache"
    for i, (level, kind, size) in enumerate([(1, "Data", "48K"), (1, "Instruction", "64K"),
                                             (2, "Unified", "2048K"), (3, "Unified", "491520K")]):
        d = caches / f"index{i}"
        d.mkdir(parents=True)
        (d / "level").write_text(f"{level}\n")
        (d / "type").write_text(f"{kind}\n")
        (d / "size").write_text(f"{size}\n")
    m = machine(proc, caches)
    assert m["cpu"] == "Example CPU @ 2.60GHz"
    assert m["caches"] == {"L1d": "48K", "L2": "2048K", "L3": "491520K"}
    # Without either file (not Linux): the platform's own name, no caches, no error.
    m = machine(tmp_path / "missing", tmp_path / "missing-too")
    assert m["cpu"] and m["caches"] == {}
    from atmlab.cli import _kib

    assert [_kib(s) for s in ("48K", "2048K", "491520K", "1536K", "?")] == ["48 KiB", "2 MiB", "480 MiB", "1536 KiB", "?"]


def test_a_table_gives_its_long_text_the_room_and_stays_short(monkeypatch):
    """A study's claims in 120 columns: the statements, the longest text,
    get the most of the width left (the old rule gave it to the threshold
    column, whose one long cell fitted, and squeezed the statements into
    a dozen columns: 125 lines where this takes under 40)."""
    import io

    import pandas as pd
    from rich.console import Console

    from atmlab import cli as cli_mod

    statement = ("WAN: TCP throughput and efficiency are higher with MSS 9140 than with MSS 512 in all "
                 "cases, the queues about three feedback delays worth of cells (s7.1)")
    df = pd.DataFrame([{"claim": f"C{i}", "statement": statement, "threshold": ">= 0.90",
                        "value": "row 1: +8.43 Mbit/s, +0.012; row 2: +7.21 Mbit/s", "holds": True}
                       for i in range(1, 10)]
                      + [{"claim": "C10", "statement": "No cell is lost", "holds": True,
                          "threshold": "at most 1.5 x the ON-OFF queue and <= 1 round trip", "value": "0 cells"}])
    buf = io.StringIO()
    monkeypatch.setattr(cli_mod, "out", Console(file=buf, width=120, highlight=False, color_system=None))
    cli_mod._print_frame(df, title="claims")
    text = buf.getvalue()
    assert "┃" in text, text
    header = next(line for line in text.splitlines() if "statement" in line)
    cells = [c.strip() for c in header.split("┃")[1:-1]]
    widths = dict(zip(cells, (len(c) for c in header.split("┃")[1:-1]), strict=True))
    assert widths["statement"] > max(widths["value"], widths["threshold"]), text
    assert len(text.splitlines()) < 40, text
    # The sharing alone: every column at least its longest word, within the room.
    least, most = [3, 10, 6, 10, 5], [3, 140, 50, 50, 5]
    columns = [["x" * 3], ["word " * 28], ["a" * 6 + " b"], ["c" * 10 + " d" * 20], ["yes"]]
    from atmlab import termtable

    ws = termtable._share_width(columns, least, most, 80)
    assert sum(ws) <= 80 and all(lo <= w <= hi for lo, w, hi in zip(least, ws, most, strict=True))


def test_printed_tables_wrap_between_words_and_keep_numbers_whole(monkeypatch):
    """The comparison of a reproduction, 11 columns in a pipe's 120: names
    wrap at their underscores instead of being cut inside a word, numbers
    stay whole, and the first column (row names) is kept; narrower, the
    table loses its rules, then each row becomes a paragraph, with the same
    words."""
    import io

    import pandas as pd
    from rich.console import Console

    from atmlab import cli as cli_mod

    df = pd.DataFrame([{"config": "SAT_WAN", "row": 1, "mss_bytes": 512, "source": "Table 1a",
                        "quantity": "max_queue_cells", "published": 6775, "simulated": 7578.0,
                        "tolerance": "x/ 1.5", "unit": "cells", "holds": True,
                        "note": "the prior study used a larger averaging interval [/] [bold]"}] * 2)
    expected = {"SAT_WAN", "max", "queue", "cells", "6775", "7578", "published", "simulated", "tolerance",
                "mss", "bytes", "averaging", "interval", "yes", "[/]", "[bold]"}  # text, not markup
    # A boxed table; narrower, the columns without rules; narrower still, a paragraph per row.
    for width, layout in ((120, "boxed"), (100, "bare"), (60, "paragraphs")):
        buf = io.StringIO()
        monkeypatch.setattr(cli_mod, "out", Console(file=buf, width=width, highlight=False, color_system=None))
        cli_mod._print_frame(df, title="t")
        text = buf.getvalue()
        words = {w for line in text.splitlines() for w in line.replace("│", " ").replace("┃", " ").split()}
        assert expected <= words, text
        assert "max_queue_cells" not in text
        assert all(len(line) <= width for line in text.splitlines()), text
        assert ("┃" in text, " · " in text) == {"boxed": (True, False), "bare": (False, False),
                                                "paragraphs": (False, True)}[layout], text


def test_bench_algorithms_cover_every_switch_algorithm_on_one_scenario():
    # `atmlab bench --algorithms`: one case per algorithm of the core, ERICA+
    # first (the reference), each the same scenario with only its
    # controllers changed, every one a valid scenario.
    from atmlab import bench
    from atmlab.reproduce.algorithms import names
    from atmlab.scenario import bundled, load

    cases = bench.algorithm_cases()
    assert list(cases)[0] == "abr:erica_plus" and sorted(cases) == sorted(f"abr:{a}" for a in names())
    for key, case in cases.items():
        assert case.scenario == bench.ALGORITHM_SCENARIO
        sc = load(bundled(case.scenario), overrides=list(case.overrides))
        ports = [sw["port"]["abr"]["algorithm"] for sw in sc.template["switches"]]
        assert ports and set(ports) == {key.removeprefix("abr:")} and not sc.template.get("probes")


def test_reproduce_algorithm_refuses_what_it_cannot_do(cli):
    for args, words in ((("kpn", "--algorithm", "capc"), ("kpn", "tcp-abr")),
                        (("tcp-abr", "--algorithm", "bogus"), ("bogus", "charny")),
                        (("all", "--algorithm", "capc"), ("one study",)),
                        (("tcp-abr", "--algorithm", "capc", "--open-choices"), ("--open-choices",))):
        p = cli("reproduce", *args)
        assert p.returncode == 2, (args, p.stderr)
        assert all(w in p.stderr for w in words) and "Traceback" not in p.stderr, (args, p.stderr)
