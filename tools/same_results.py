"""Records what the core computes, to show that a change of the core changed
no result: every number of every bundled scenario's run (the first and last
point of a bundled sweep), and the CSVs of ``atmlab reproduce all --quick``.
(That the event elision changes nothing is the Rust tests' to show: they
run networks both ways.) To compare two cores, run `record` twice with
the same Python package and each core's `_core` extension in turn.

    python tools/same_results.py record before.json        # on the old build
    python tools/same_results.py record after.json         # on the new build
    python tools/same_results.py compare before.json after.json

``compare`` prints every difference and exits 1 if there is one. Numbers
are compared exactly (a result is deterministic to the bit), after
:func:`normalise`, which states every documented change of the result's
*shape* (a field renamed or moved), never of a value.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _numbers(node: Any, where: str, out: dict[str, Any]) -> None:
    """Every leaf of a result, by its path (lists of named items by name)."""
    if isinstance(node, dict):
        for k, v in node.items():
            _numbers(v, f"{where}.{k}" if where else k, out)
    elif isinstance(node, list):
        for j, v in enumerate(node):
            name = None
            if isinstance(v, dict):
                name = v.get("name") or v.get("port") or v.get("flow")
            _numbers(v, f"{where}[{name if name is not None else j}]", out)
    else:
        out[where] = node


def normalise(result: dict[str, Any]) -> dict[str, Any]:
    """A run's result as the compared numbers. Shape changes of the
    result, each with the change that made it:

    * ``abr_ports``: a port's controller reports its own readings by name
      (the switch-control seam): an EFCI port no longer reports ERICA's
      readings as nulls, nor an ERICA port ``efci_marked = 0``.
    """
    flat: dict[str, Any] = {}
    _numbers(result, "", flat)
    return {k: v for k, v in flat.items() if not _absent_reading(k, v)}


def _absent_reading(key: str, value: Any) -> bool:
    if not key.startswith("abr_ports["):
        return False
    field = key.rsplit(".", 1)[-1]
    erica_fields = {"intervals", "load_factor", "abr_capacity_bps", "fair_share_bps", "high_priority_bps",
                    "active_vcs"}
    return (field in erica_fields and value in (None, 0)) or (field == "efci_marked" and value == 0)


def _runs(quick: bool) -> dict[str, Any]:
    import atmlab
    from atmlab.expand import points
    from atmlab.scenario import bundled, bundled_names, load

    out: dict[str, Any] = {}
    for name in bundled_names():
        sc = load(bundled(name))
        pts = points(sc.source, sc.template)
        chosen = [pts[0], pts[-1]] if len(pts) > 1 else pts
        for p in chosen:
            data = json.loads(json.dumps(p.scenario))
            if quick:
                data["simulation"]["duration"] = "200 ms"
            key = f"{name}@{p.index}"
            print(f"  {key}", file=sys.stderr, flush=True)
            out[key] = normalise(atmlab.run(data).raw)
    return out


def _reproductions() -> dict[str, str]:
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "atmlab.cli", "reproduce", "all", "--quick", "--out", tmp, "-j", "2"],
                       check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
        return {str(p.relative_to(tmp)): p.read_text() for p in sorted(Path(tmp).rglob("*.csv"))}


def record(path: Path, quick: bool) -> None:
    doc = {"runs": _runs(quick), "reproduce_quick_csvs": _reproductions()}
    path.write_text(json.dumps(doc, indent=1, sort_keys=True))
    print(f"wrote {path}: {len(doc['runs'])} runs, {len(doc['reproduce_quick_csvs'])} CSVs", file=sys.stderr)


def compare(a_path: Path, b_path: Path) -> int:
    a, b = json.loads(a_path.read_text()), json.loads(b_path.read_text())
    differences = 0
    for section in ("runs", "reproduce_quick_csvs"):
        for key in sorted(set(a[section]) | set(b[section])):
            x, y = a[section].get(key), b[section].get(key)
            if x == y:
                continue
            if isinstance(x, dict) and isinstance(y, dict):
                for k in sorted(set(x) | set(y)):
                    if x.get(k, "<absent>") != y.get(k, "<absent>"):
                        differences += 1
                        print(f"{key}: {k}: {x.get(k, '<absent>')!r} -> {y.get(k, '<absent>')!r}")
            elif isinstance(x, str) and isinstance(y, str):
                differences += 1
                changed = [(i, u, v) for i, (u, v) in enumerate(zip(x.splitlines(), y.splitlines(), strict=False))
                           if u != v]
                print(f"{section}: {key}: {len(changed)} lines differ" + (
                    f"; line {changed[0][0] + 1}: {changed[0][1]!r} -> {changed[0][2]!r}" if changed else
                    f"; {len(x.splitlines())} -> {len(y.splitlines())} lines"))
            else:
                differences += 1
                print(f"{section}: {key}: {str(x)[:200]!r} -> {str(y)[:200]!r}")
    n = len(a["runs"]), len(a["reproduce_quick_csvs"])
    print(f"{differences} differences in {n[0]} runs and {n[1]} CSVs" if differences else
          f"identical: {n[0]} runs, {n[1]} CSVs")
    return 1 if differences else 0


def main(argv: list[str]) -> int:
    if len(argv) >= 2 and argv[0] == "record":
        record(Path(argv[1]), quick="--quick" in argv)
        return 0
    if len(argv) == 3 and argv[0] == "compare":
        return compare(Path(argv[1]), Path(argv[2]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
