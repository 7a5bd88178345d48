"""Packet capture (`atmlab run --pcap DIR`): the files, and that tshark
decodes them and counts the retransmissions atmlab counted."""

from __future__ import annotations

import json
import shutil
import struct
import subprocess
from pathlib import Path
from typing import Any

import pytest

import atmlab
from atmlab.scenario import load

TSHARK = shutil.which("tshark")
MERGECAP = shutil.which("mergecap")
needs_tshark = pytest.mark.skipif(
    TSHARK is None or MERGECAP is None,
    reason="tshark and mergecap are not installed (Debian package tshark; .ci/run installs it)",
)

#: The pcap file header atmlab writes: nanosecond magic, version 2.4, SunATM.
PCAP_MAGIC_NS = 0xA1B23C4D
LINKTYPE_SUNATM = 123


def nsource_lan(duration: str = "2 s", capture: list[list[str]] | None = None) -> dict[str, Any]:
    """The bundled N-source LAN scenario, shortened (it still loses segments
    at sw1 and retransmits them)."""
    sc = load("nsource_lan").data
    sc["simulation"]["duration"] = duration
    if capture is not None:
        sc["simulation"]["capture"] = capture
    return sc


def tshark(*args: str) -> str:
    assert TSHARK is not None
    p = subprocess.run([TSHARK, *args], capture_output=True, text=True, timeout=300, check=False)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_capture_writes_a_pcap_per_link_direction_and_changes_no_result(tmp_path: Path) -> None:
    sc = nsource_lan("200 ms")
    plain = atmlab.run(sc)
    captured = atmlab.run(sc, pcap=tmp_path / "cap")
    assert captured.to_json() == plain.to_json()
    expected = {f"{a}-{b}.pcap" for link in sc["links"] for a, b in (link["between"], link["between"][::-1])}
    assert {p.name for p in (tmp_path / "cap").iterdir()} == expected
    with open(tmp_path / "cap" / "src0-sw1.pcap", "rb") as f:
        magic, major, minor, _, _, _, linktype = struct.unpack("<IHHiIII", f.read(24))
        record = f.read(16)
    assert (magic, major, minor, linktype) == (PCAP_MAGIC_NS, 2, 4, LINKTYPE_SUNATM)
    assert len(record) == 16, "the connection's SYN at least"


def test_capture_key_names_links_and_errors_name_it(tmp_path: Path) -> None:
    atmlab.run(nsource_lan("100 ms", [["sw1", "src3"]]), pcap=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["src3-sw1.pcap", "sw1-src3.pcap"]
    with pytest.raises(atmlab.ScenarioError, match=r"simulation\.capture\[0\].*no link between src0 and sw2"):
        atmlab.validate(nsource_lan(capture=[["src0", "sw2"]]))
    with pytest.raises(atmlab.ScenarioError, match=r"simulation\.capture\[0\]\[1\]"):
        atmlab.validate(nsource_lan(capture=[["src0", "nowhere"]]))


@needs_tshark
def test_tshark_decodes_the_nsource_capture_and_counts_atmlab_retransmissions(cli, tmp_path: Path) -> None:
    # Each source's own link: every segment it sent (retransmissions
    # included) on src -> sw1, every ACK it got on sw1 -> src. Merged, they
    # give tshark both directions, as a tap on that link would.
    sources = [f"src{i}" for i in range(5)]
    scenario = tmp_path / "nsource_lan.json"
    scenario.write_text(json.dumps(nsource_lan("2 s", [[s, "sw1"] for s in sources])))
    p = cli("run", str(scenario), "--json", "--pcap", str(tmp_path / "cap"))
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)
    counted = {c["name"]: c["retransmitted_segments"] for c in result["connections"]}
    counted_dupacks = {c["name"]: c["dupacks_received"] for c in result["connections"]}
    assert sum(counted.values()) > 0, "the run must retransmit for the comparison to mean anything"
    assert sum(counted_dupacks.values()) > 0
    found, found_dupacks = {}, {}
    for i, s in enumerate(sources):
        merged = tmp_path / f"{s}.pcap"
        assert MERGECAP is not None
        subprocess.run([MERGECAP, "-w", str(merged), str(tmp_path / "cap" / f"{s}-sw1.pcap"),
                        str(tmp_path / "cap" / f"sw1-{s}.pcap")], check=True, timeout=300)
        # Decodes: no malformed frame, no expert warning or error (notes
        # such as retransmissions and duplicate ACKs are what we look for).
        assert tshark("-r", str(merged), "-Y", "_ws.malformed or _ws.expert.severity >= 0x600000") == ""
        frames = tshark("-r", str(merged), "-Y", "tcp.analysis.retransmission", "-T", "fields", "-e", "frame.number")
        found[f"tcp{i}"] = len(frames.split())
        frames = tshark("-r", str(merged), "-Y", "tcp.analysis.duplicate_ack", "-T", "fields", "-e", "frame.number")
        found_dupacks[f"tcp{i}"] = len(frames.split())
    assert found == counted
    assert found_dupacks == counted_dupacks
