"""`atmlab emulate`: replay (deterministic, no privileges), the errors a user
meets, and live runs of real kernel TCP/IP in network namespaces the tests
create and remove (skipped, with the reason, without root or /dev/net/tun;
marked `live`, run serially as every test here is). No test bounds a
throughput or a round trip from above: the machine's speed is not the
model's."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from atmlab import _core

TOOLS = Path(__file__).resolve().parent / "emulate_tools"
ATMLAB = [sys.executable, "-m", "atmlab"]

A, B = "10.200.0.1", "10.200.0.2"


def scenario(tmp: Path, *, apps: list[dict[str, Any]], buffer: str = "100000 cells",
             policy: dict[str, Any] | None = None, delay: str = "5 ms", duration: str = "30 s",
             a_rate: str = "155.52 Mbit/s") -> Path:
    """a -> sw -> b, both external, links of `delay` each (OC-3 into b, `a_rate` from a)."""
    import tomllib  # noqa: F401  (the file is written as JSON: the loader reads both)

    port: dict[str, Any] = {"buffer": buffer}
    if policy is not None:
        port["drop_policy"] = policy
    data = {
        "name": "emulated",
        "simulation": {"duration": duration, "capture": [["sw", "b"], ["a", "sw"]]},
        "hosts": [
            {"name": "a", "external": {"address": A, "congestion": "reno"}},
            {"name": "b", "external": {"address": B}},
        ],
        "switches": [{"name": "sw", "port": port}],
        "links": [
            {"between": ["a", "sw"], "rate": a_rate, "delay": delay},
            {"between": ["sw", "b"], "rate": "155.52 Mbit/s", "delay": delay},
        ],
        "vcs": [{"name": "v", "path": ["a", "sw", "b"]}],
        "apps": apps,
    }
    path = tmp / "emulated.json"
    path.write_text(json.dumps(data))
    return path


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ATMLAB, *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200"})


def records(pcap: Path) -> list[bytes]:
    data = pcap.read_bytes()
    out, i = [], 24
    while i < len(data):
        incl = struct.unpack_from("<I", data, i + 8)[0]
        out.append(data[i + 16:i + 16 + incl])
        i += 16 + incl
    return out


def tcp_needs_retransmission(ip: bytes) -> bool:
    """An IPv4 TCP packet carrying data, a SYN or a FIN (what TCP sends again when it is lost)."""
    if len(ip) < 20 or ip[9] != 6:
        return False
    ihl = (ip[0] & 0x0F) * 4
    total = struct.unpack("!H", ip[2:4])[0]
    offset = (ip[ihl + 12] >> 4) * 4
    flags = ip[ihl + 13]
    return total - ihl - offset > 0 or bool(flags & 0x03)


# --- replay: no privileges, no clock -----------------------------------------------------------

def ip_packet(src: str, dst: str, n: int, tag: int) -> bytes:
    head = struct.pack("!BBHHHBBH4s4s", 0x45, 0, n, tag, 0x4000, 64, 253, 0,
                       bytes(map(int, src.split("."))), bytes(map(int, dst.split("."))))
    return (head + bytes((tag + i) % 256 for i in range(n - 20)))[:n]


def write_pcap(path: Path, packets: list[tuple[float, bytes]]) -> None:
    with path.open("wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 101))  # raw IP
        for t, p in packets:
            f.write(struct.pack("<IIII", int(t), int((t % 1) * 1e6), len(p), len(p)))
            f.write(p)


def test_replay_gives_byte_identical_packets_deterministically(tmp_path: Path) -> None:
    sent = [(1000 + 0.0003 * i, ip_packet(A, B, 60 + 37 * i, i)) for i in range(100)]
    trace = tmp_path / "in.pcap"
    write_pcap(trace, sent)
    sc = scenario(tmp_path, apps=[])
    runs = []
    for k in range(2):
        out = tmp_path / f"out{k}"
        r = cli("emulate", str(sc), "--replay", str(trace), "--pcap", str(out), "--json")
        assert r.returncode == 0, r.stderr
        runs.append(json.loads(r.stdout))
        got = [rec[12:] for rec in records(out / "sw-b.pcap")]
        assert got == [p for _, p in sent]
        # SunATM pseudo-header, then LLC/SNAP (RFC 2684).
        assert all(rec[4:12] == bytes.fromhex("aaaa030000000800") for rec in records(out / "sw-b.pcap"))
    assert runs[0] == runs[1]
    assert runs[0]["replay"] == {"records": 100, "injected": 100, "skipped": 0, "refused": 0, "delivered": 100}


def test_replay_and_emulate_errors_are_one_line(tmp_path: Path) -> None:
    sc = scenario(tmp_path, apps=[])
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"not a pcap at all, really")
    r = cli("emulate", str(sc), "--replay", str(bad))
    assert r.returncode != 0 and "Traceback" not in r.stderr and "bad.pcap" in r.stderr, r.stderr
    plain = tmp_path / "plain.json"
    data = json.loads(sc.read_text())
    for h in data["hosts"]:
        del h["external"]
    plain.write_text(json.dumps(data))
    trace = tmp_path / "in.pcap"
    write_pcap(trace, [(0.0, ip_packet(A, B, 100, 0))])
    r = cli("emulate", str(plain), "--replay", str(trace))
    assert r.returncode != 0 and "no external host" in r.stderr and "Traceback" not in r.stderr, r.stderr
    data = json.loads(sc.read_text())
    data["hosts"][0]["external"]["address"] = "10.200.0"
    plain.write_text(json.dumps(data))
    r = cli("emulate", str(plain), "--replay", str(trace))
    assert r.returncode == 2 and "hosts[0].external.address" in r.stderr, r.stderr


# --- the bundled examples and the command check -------------------------------------------------

EXAMPLES = ["emulate/sat_abr", "emulate/ubr_epd", "emulate/kpn_vbr"]


def test_bundled_emulation_examples_are_listed_valid_and_say_how_to_run_them() -> None:
    from atmlab import emulate
    from atmlab.scenario import bundled, load

    listed = cli("scenarios")
    assert listed.returncode == 0, listed.stderr
    for name in EXAMPLES:
        assert name in listed.stdout
        r = cli("validate", name)
        assert r.returncode == 0 and r.stdout.startswith("ok "), r.stderr
        text = bundled(name).read_text()
        assert text.startswith("# "), f"{name}: a header comment first"
        assert f"sudo atmlab emulate {name}" in text, f"{name}: the header says how to run it"
        p = emulate.plan(load(name).data)
        assert len(p.hosts) >= 2 and any(a.wait for a in p.apps), name
        for a in p.apps:
            assert not re.search(r"\{\w+\}", a.command), (name, a.command)  # every {HOST} replaced


def test_the_installed_check_reads_the_program_and_leaves_shell_syntax_to_the_shell() -> None:
    from atmlab.emulate import first_program

    assert first_program("iperf3 -c 10.0.0.1") == "iperf3"
    assert first_program("/usr/bin/env python3 -V") == "/usr/bin/env"
    assert first_program("") == ""
    for shell in ["d=$(mktemp -d) && cd $d", "cd /tmp && ls", "$HOME/bin/x", "(sleep 1; ls)", "exec foo", "'unclosed"]:
        assert first_program(shell) is None, shell


# --- falling behind real time: the loop on a fake clock ------------------------------------------

class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class FakeEmulation:
    """The core's Emulation as the loop sees it: each step takes its budget
    of the fake clock; from `slow_from` s on, `share` of that time is spent
    behind; the run ends at `end` s (or just after end_now)."""

    def __init__(self, clock: FakeClock, *, end: float, slow_from: float = 0.0, share: float = 0.0) -> None:
        self.clock, self.t0, self.end, self.slow_from, self.share = clock, clock.t, end, slow_from, share
        self.behind, self.ended, self.reports = 0.0, False, 0

    def step(self, budget: float) -> bool:
        self.clock.t += budget
        if self.clock.t - self.t0 > self.slow_from:
            self.behind += budget * self.share
        return self.ended or self.clock.t - self.t0 >= self.end

    def report(self) -> str:
        self.reports += 1
        return json.dumps({"behind_s": self.behind, "lag_max_s": 0.25})

    def end_now(self) -> None:
        self.ended = True


def fake_plan(apps: list[Any]) -> Any:
    from atmlab.emulate import Plan

    return Plan(hosts=[], apps=apps, max_lag_s=None)


def test_a_run_persistently_behind_warns_once_during_it_naming_max_lag() -> None:
    from atmlab.emulate import drive

    clock = FakeClock()
    emu = FakeEmulation(clock, end=30.0, slow_from=5.0, share=0.5)
    warnings: list[tuple[float, str]] = []
    elapsed = drive(emu, fake_plan([]), clock=clock, warn=lambda m: warnings.append((clock.t - 1000.0, m)))
    assert elapsed == pytest.approx(30.0, abs=0.1)
    assert len(warnings) == 1, warnings
    at, message = warnings[0]
    # Behind by half of each second from 5 s on: 0.5 (t - 5) is over 10 % of t after 6.25 s
    # (and under 1 s): seen within a second of that, not before.
    assert 6.25 <= at <= 7.3, at
    assert "\n" not in message and "realtime.max_lag" in message and "250 ms" in message and "so far" in message
    assert emu.reports <= 10  # looked at about once a second, not at every step


def test_a_run_that_keeps_up_never_warns_and_ends_when_the_waited_command_exits() -> None:
    from atmlab.emulate import ExecApp, drive

    class Done:
        def poll(self) -> int:
            return 0

    clock = FakeClock()
    emu = FakeEmulation(clock, end=30.0, slow_from=0.0, share=0.005)  # 5 ms behind per second
    app = ExecApp("client", "a", "true", start_s=2.0, wait=True)
    started: list[float] = []

    def start(a: ExecApp) -> None:
        started.append(clock.t - 1000.0)
        a.proc = Done()  # type: ignore[assignment]

    warnings: list[str] = []
    elapsed = drive(emu, fake_plan([app]), clock=clock, start=start, warn=warnings.append)
    assert warnings == []
    assert started and 2.0 <= started[0] < 2.1
    assert 2.0 <= elapsed < 2.2  # ended right after the command did, not at 30 s


@pytest.mark.parametrize(("behind", "elapsed", "warns"), [
    (0.5, 3.0, True),      # more than 10 % of a short run
    (0.25, 3.0, False),    # less
    (0.5, 20.0, False),    # under 1 s of a long run
    (1.2, 100.0, True),    # over 1 s, however long the run
    (0.09, 0.5, False),    # a start-up hiccup: under 0.1 s
])
def test_behind_means_over_1_s_or_10_percent_of_the_run(behind: float, elapsed: float, warns: bool) -> None:
    from atmlab.emulate import behind_warning

    message = behind_warning({"behind_s": behind, "lag_max_s": 0.04}, elapsed)
    assert (message is not None) == warns
    if message is not None:
        assert message.startswith("warning: ") and "in all" in message and "40 ms" in message


# --- live --------------------------------------------------------------------------------------

def _live_reason() -> str | None:
    if sys.platform != "linux":
        return "live emulation needs Linux"
    if os.geteuid() != 0:
        return "live emulation needs root (TUN devices, network namespaces)"
    if not os.path.exists("/dev/net/tun"):
        return "no /dev/net/tun"
    if not hasattr(_core, "Emulation"):
        return "the core was built without emulation"
    r = subprocess.run(["ip", "netns", "add", f"atmlab-{os.getpid()}-probe"], capture_output=True)
    if r.returncode != 0:
        return f"network namespaces unavailable: {r.stderr.decode().strip()}"
    subprocess.run(["ip", "netns", "del", f"atmlab-{os.getpid()}-probe"], capture_output=True)
    return None


REASON = _live_reason()
live = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def leftovers() -> list[str]:
    r = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True)
    return [line.split()[0] for line in r.stdout.splitlines() if line.startswith("atmlab-")]


def exec_app(name: str, host: str, command: str, start: str = "0 s") -> dict[str, Any]:
    return {"kind": "exec", "name": name, "host": host, "command": command, "start": start, "wait": True}


@pytest.mark.live
@live
def test_ping_is_answered_after_at_least_the_propagation_round_trip(tmp_path: Path) -> None:
    out = tmp_path / "rtt.txt"
    sc = scenario(tmp_path, apps=[exec_app("ping", "a", f"{sys.executable} {TOOLS / 'ping.py'} {{b}} 3 {out} && "
                                                      f"echo pinged")])
    r = cli("emulate", str(sc), "--json")
    assert r.returncode == 0, r.stderr
    assert "pinged" in r.stderr, "a command's output goes to stderr: stdout is the JSON alone"
    rtts = [float(x) for x in out.read_text().split()]
    assert len(rtts) == 3
    # Four 5 ms hops there and back, plus cells: at least 20 ms.
    assert min(rtts) >= 0.020, rtts
    doc = json.loads(r.stdout)
    assert doc["exit_codes"] == {"ping": 0}
    assert doc["lag"]["packets_out"] >= 6
    assert leftovers() == []


def transfer(tmp_path: Path, **kw: Any) -> tuple[dict[str, Any], Path]:
    """2 MB from a to b; the sender's TCP_INFO is left in tmp_path/info.txt."""
    got, sent, info = tmp_path / "got.txt", tmp_path / "sent.txt", tmp_path / "info.txt"
    apps = [
        exec_app("sink", "b", f"{sys.executable} {TOOLS / 'sink.py'} {{b}} 5001 {got}"),
        exec_app("send", "a", f"{sys.executable} {TOOLS / 'send.py'} {{b}} 5001 2000000 {sent} {info}",
                 start="0.3 s"),
    ]
    sc = scenario(tmp_path, apps=apps, **kw)
    pcap = tmp_path / "pcap"
    r = cli("emulate", str(sc), "--json", "--pcap", str(pcap), timeout=180)
    assert r.returncode == 0, r.stderr
    assert got.read_text() == sent.read_text(), "the 2 MB arrived intact"
    assert leftovers() == []
    return json.loads(r.stdout), pcap


@pytest.mark.live
@live
def test_a_2_mb_transfer_over_kernel_tcp_arrives_intact(tmp_path: Path) -> None:
    doc, pcap = transfer(tmp_path)
    assert doc["exit_codes"] == {"sink": 0, "send": 0}
    # Every captured frame is a whole IPv4 packet, bytes as the kernel sent them.
    recs = records(pcap / "a-sw.pcap")
    assert len(recs) > 200
    assert all(struct.unpack("!H", rec[14:16])[0] == len(rec) - 12 for rec in recs)


@pytest.mark.live
@live
def test_a_small_epd_buffer_drops_whole_frames_and_tcp_recovers(tmp_path: Path) -> None:
    policy = {"kind": "epd", "threshold": "400 cells"}
    # a's link is four times as fast as b's: the port toward b queues.
    doc, pcap = transfer(tmp_path, buffer="600 cells", policy=policy, a_rate="622.08 Mbit/s")
    result = doc["result"]  # cell conservation was checked by the run itself
    assert result["switch_cells_dropped"] > 0
    sw_b = records(pcap / "sw-b.pcap")
    a_sw = records(pcap / "a-sw.pcap")
    # No partial frame: each record holds exactly its IP total length.
    assert all(struct.unpack("!H", rec[14:16])[0] == len(rec) - 12 for rec in sw_b)
    assert len(sw_b) < len(a_sw), "frames were lost between a and b"
    # The run reports frames lost only in total (both directions) and drops per port in cells, so
    # the data direction's lost frames are those captured leaving a and never arriving at b (every
    # transmission differs in its IP ID and TCP timestamp: a multiset difference of the bytes).
    lost = Counter(a_sw) - Counter(sw_b)
    assert doc["result"]["frames"]["lost"] >= sum(lost.values())
    # Those that carried data, a SYN or a FIN: each is one transmission the kernel had to repeat
    # (a pure ACK is never repeated, and none is expected to be lost: the queue is empty then).
    must_repeat = sum(n for rec, n in lost.items() if tcp_needs_retransmission(rec[12:]))
    assert must_repeat > 0
    info = dict(line.split() for line in (tmp_path / "info.txt").read_text().splitlines())
    assert int(info["pmtu"]) == 9180, info  # the struct tcp_info offsets read the right fields
    # A lower bound only: spurious retransmissions and tail-loss probes come on top.
    assert int(info["total_retrans"]) >= must_repeat, (info, must_repeat)


# --- the live capture (--live-pcap) -------------------------------------------------------------

def test_live_pcap_refuses_a_path_that_is_no_fifo_and_a_host_that_is_not_external(tmp_path: Path) -> None:
    sc = scenario(tmp_path, apps=[])
    plain = tmp_path / "plain.pcap"
    plain.write_bytes(b"")
    for args, words in [
        (["--live-pcap", str(plain)], ["plain.pcap", "not a FIFO"]),
        (["--live-pcap", str(tmp_path / "no" / "such" / "fifo")], ["does not exist"]),
        (["--live-pcap", str(tmp_path / "f"), "--live-pcap-host", "sw"], ["--live-pcap-host sw", "a, b"]),
        (["--live-pcap-host", "a"], ["--live-pcap FIFO"]),
    ]:
        r = cli("emulate", str(sc), *args)
        assert r.returncode != 0 and "Traceback" not in r.stderr, r.stderr
        assert all(w in r.stderr for w in words), (args, r.stderr)
        assert len([line for line in r.stderr.splitlines() if line.strip()]) <= 3, r.stderr
    assert plain.read_bytes() == b"" and not (tmp_path / "f").exists()
    assert leftovers() == []


def test_live_pcap_without_a_reader_gives_up_with_an_error_instead_of_hanging(tmp_path: Path) -> None:
    from atmlab.emulate import EmulationError, open_fifo

    made = tmp_path / "made"
    with pytest.raises(EmulationError, match="no reader opened the FIFO within 0.3 s.*wireshark -k -i"):
        open_fifo(made, 0.3)
    assert not made.exists(), "a FIFO made for the run is removed"
    theirs = tmp_path / "theirs"
    os.mkfifo(theirs)
    with pytest.raises(EmulationError, match="no reader"):
        open_fifo(theirs, 0.2)
    assert theirs.exists(), "the user's own FIFO stays"


def read_pcap_stream(data: bytes) -> tuple[tuple[int, ...], list[tuple[int, int, bytes]]]:
    """The header of a classic pcap stream, and its records (s, ns, bytes); the stream must be whole."""
    header = struct.unpack_from("<IHHiIII", data, 0)
    out, i = [], 24
    while i < len(data):
        sec, frac, incl, orig = struct.unpack_from("<IIII", data, i)
        assert incl <= orig and i + 16 + incl <= len(data), "a whole record"
        out.append((sec, frac, data[i + 16:i + 16 + incl]))
        i += 16 + incl
    return header, out


@pytest.mark.live
@live
def test_live_pcap_streams_the_hosts_packets_to_a_fifo_while_the_run_goes(tmp_path: Path) -> None:
    import threading

    fifo = tmp_path / "live.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []

    seen = tmp_path / "seen"

    def reader() -> None:
        with open(fifo, "rb") as f:  # blocks until atmlab opens it for writing
            while chunk := f.read1(1 << 16):
                got.append(chunk)
                if not seen.exists() and len(read_pcap_stream(b"".join(got))[1]) >= 1:
                    seen.touch()

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    out = tmp_path / "rtt.txt"
    # Live, not at the end: a command of the run waits until the reader has a whole record (and
    # fails if it never comes), so the run cannot end before one arrived.
    watch = (f"{sys.executable} -c \"import os, sys, time; [time.sleep(0.05) for _ in range(600) if not "
             f"os.path.exists('{seen}')]; sys.exit(0 if os.path.exists('{seen}') else 1)\"")
    sc = scenario(tmp_path, apps=[exec_app("ping", "a", f"{sys.executable} {TOOLS / 'ping.py'} {{b}} 3 {out}"),
                                  exec_app("watch", "a", watch)])
    r = cli("emulate", str(sc), "--json", "--live-pcap", str(fifo))
    t.join(timeout=30)
    assert r.returncode == 0, r.stderr
    assert not t.is_alive(), "the writer closed the FIFO at the end"
    header, recs = read_pcap_stream(b"".join(got))
    assert header[0] == 0xA1B23C4D and header[6] == 101, header  # pcap, ns timestamps, LINKTYPE_RAW
    assert len(recs) >= 1
    # Host a's view, both ways: its echo requests to b and b's replies to it (ICMP types 8 and 0).
    icmp = [(rec[12:16], rec[16:20], rec[20]) for _, _, rec in recs if rec[0] >> 4 == 4 and rec[9] == 1]
    a, b = bytes(map(int, A.split("."))), bytes(map(int, B.split(".")))
    assert (a, b, 8) in icmp and (b, a, 0) in icmp, icmp
    doc = json.loads(r.stdout)
    assert doc["exit_codes"] == {"ping": 0, "watch": 0}, "a record reached the reader during the run"
    assert doc["lag"]["live_pcap"]["host"] == "a" and doc["lag"]["live_pcap"]["packets"] == len(recs)
    assert "live capture:" in r.stderr
    assert leftovers() == []
