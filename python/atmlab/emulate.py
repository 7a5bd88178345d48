"""Real operating-system TCP/IP across the simulated ATM network
(``atmlab emulate``; docs/emulate.md).

Each external host of the scenario (``hosts[i].external``) becomes a TUN
device made by the core (``atmlab._core.Emulation``), moved into a network
namespace of its own (``atmlab-<pid>-<host>``) with its address, the
scenario's MTU, IPv6 off and the chosen congestion control; the scenario's
``exec`` applications run there, and the core's real-time driver carries
their packets cell by cell. Everything is set up and torn down with
iproute2's ``ip``; no Python package beyond the standard library.

``replay`` needs none of this: it injects a recorded pcap at its
timestamps, with no wall clock, deterministically.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import re
import select
import shlex
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import AtmlabError

PREFIX = "atmlab-"
_STEP_S = 0.05


class EmulationError(AtmlabError):
    """An emulation that cannot start or could not go on (not root, no
    /dev/net/tun, no namespaces, a command that does not exist...)."""


@dataclass
class ExecApp:
    name: str
    host: str
    command: str
    start_s: float
    wait: bool
    proc: subprocess.Popen[bytes] | None = None


@dataclass
class Plan:
    """What the scenario asks of the emulation."""

    hosts: list[dict[str, Any]]          # name, address, congestion, mtu
    apps: list[ExecApp]
    max_lag_s: float | None
    namespaces: dict[str, str] = field(default_factory=dict)


def _seconds(text: str) -> float:
    from . import _core

    kind, value = _core.quantity(str(text))
    return float(value)


def plan(data: dict[str, Any]) -> Plan:
    """The external hosts and exec applications of an expanded scenario."""
    hosts = []
    for h in data.get("hosts", []):
        x = h.get("external")
        if x is None:
            continue
        mtu = h.get("mtu", 9180)
        if isinstance(mtu, str):
            mtu = int(re.sub(r"\D", "", mtu) or 9180)
        hosts.append({"name": h["name"], "address": x["address"], "congestion": x.get("congestion"), "mtu": int(mtu)})
    address = {h["name"]: h["address"] for h in hosts}
    apps = []
    for a in data.get("apps", []):
        if a.get("kind") != "exec":
            continue
        command = re.sub(r"\{(\w+)\}", lambda m: address.get(m.group(1), m.group(0)), a["command"])
        start = _seconds(a["start"]) if "start" in a else 0.0
        apps.append(ExecApp(a["name"], a["host"], command, start, bool(a.get("wait", False))))
    max_lag = (data.get("realtime") or {}).get("max_lag")
    return Plan(hosts, apps, None if max_lag is None else _seconds(max_lag))


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(["ip", *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise EmulationError(f"ip {' '.join(args)}: {r.stderr.strip() or 'failed'}")
    return r


def check_system(p: Plan) -> None:
    """Clear errors for what a live emulation needs and lacks."""
    if not p.hosts:
        raise EmulationError("the scenario has no external host (hosts[i].external = { address = ... })")
    if os.geteuid() != 0:
        raise EmulationError("atmlab emulate needs root (or CAP_NET_ADMIN) to make TUN devices and network "
                             "namespaces: run it with sudo (--replay needs neither)")
    if not os.path.exists("/dev/net/tun"):
        raise EmulationError("/dev/net/tun is missing: the kernel has no TUN support here (modprobe tun), "
                             "or this container does not pass it through")
    if shutil.which("ip") is None:
        raise EmulationError("the `ip` command (iproute2) is missing: install iproute2")
    probe = f"{PREFIX}{os.getpid()}-probe"
    r = _ip("netns", "add", probe, check=False)
    if r.returncode != 0:
        raise EmulationError(f"network namespaces are unavailable: ip netns add: {r.stderr.strip()}")
    _ip("netns", "del", probe, check=False)
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
    known = set(available.read_text().split()) if available.exists() else set()
    for h in p.hosts:
        c = h["congestion"]
        if c is not None and known and c not in known:
            subprocess.run(["modprobe", f"tcp_{c}"], capture_output=True)
            known = set(available.read_text().split())
            if c not in known:
                raise EmulationError(f"host {h['name']}: congestion control '{c}' is not available in this "
                                     f"kernel (available: {' '.join(sorted(known))})")
    for a in p.apps:
        program = first_program(a.command)
        if program is not None and shutil.which(program) is None:
            raise EmulationError(f"apps {a.name}: command '{program}' not found (is it installed and on PATH?)")


_SHELL_WORDS = {"cd", "exec", "trap", "set", "export", "for", "if", "while", "until", "case", "test", "[", "{",
                "(", "!", "eval", "command", "time", "umask", "ulimit", "."}


def first_program(command: str) -> str | None:
    """The program an exec command starts with, to check it is installed;
    None when `sh -c` syntax comes first (variable assignments, a builtin
    or keyword, a substitution), where only the shell can tell: then a
    missing program is the command's own error, shown on its output."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words:
        return ""
    first = words[0]
    if first in _SHELL_WORDS or re.match(r"\w+=", first) or any(c in first for c in "$`();&|<>"):
        return None
    return first


def device_names(p: Plan) -> list[str]:
    return [f"atm{os.getpid() % 100000}x{i}" for i in range(len(p.hosts))]


def setup(p: Plan, devices: list[str]) -> None:
    """Moves each device into its host's namespace and configures it."""
    for h, dev in zip(p.hosts, devices):
        ns = f"{PREFIX}{os.getpid()}-{h['name']}"
        _ip("netns", "add", ns)
        p.namespaces[h["name"]] = ns
        sysctls = ["net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"]
        if h["congestion"]:
            sysctls.append(f"net.ipv4.tcp_congestion_control={h['congestion']}")
        for s in sysctls:
            r = subprocess.run(["ip", "netns", "exec", ns, "sysctl", "-qw", s], capture_output=True, text=True)
            if r.returncode != 0:
                why = r.stderr.strip()
                if "congestion" in s:
                    allowed = Path("/proc/sys/net/ipv4/tcp_allowed_congestion_control")
                    if allowed.is_file():
                        why += (f" (a network namespace may choose only among the host's "
                                f"net.ipv4.tcp_allowed_congestion_control: {allowed.read_text().strip()}; as root "
                                f"on the host, add '{h['congestion']}' to it, or name one of those)")
                raise EmulationError(f"host {h['name']}: sysctl {s}: {why}")
        _ip("link", "set", dev, "netns", ns)
        _ip("-n", ns, "link", "set", "lo", "up")
        _ip("-n", ns, "link", "set", dev, "mtu", str(h["mtu"]))
        _ip("-n", ns, "addr", "add", f"{h['address']}/32", "dev", dev)
        _ip("-n", ns, "link", "set", dev, "up")
        for other in p.hosts:
            if other is not h:
                _ip("-n", ns, "route", "add", f"{other['address']}/32", "dev", dev)


def teardown(p: Plan) -> None:
    for a in p.apps:
        if a.proc is not None and a.proc.poll() is None:
            try:
                os.killpg(a.proc.pid, signal.SIGTERM)
                a.proc.wait(timeout=2)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                try:
                    os.killpg(a.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    for ns in p.namespaces.values():
        _ip("netns", "del", ns, check=False)
    p.namespaces.clear()


def cleanup_leftovers() -> list[str]:
    """Removes the namespaces of emulations whose process is gone."""
    removed = []
    r = _ip("netns", "list", check=False)
    for line in r.stdout.splitlines():
        name = line.split()[0] if line.split() else ""
        m = re.fullmatch(rf"{PREFIX}(\d+)-.+", name)
        if m and not Path(f"/proc/{m.group(1)}").exists():
            _ip("netns", "del", name, check=False)
            removed.append(name)
    return removed


def _start(a: ExecApp, ns: str) -> None:
    # Their output goes to stderr: stdout holds only the run's summary or --json.
    a.proc = subprocess.Popen(["ip", "netns", "exec", ns, "sh", "-c", a.command], start_new_session=True,
                              stdout=sys.stderr.fileno())


@dataclass
class LiveOptions:
    """``--live-pcap FIFO`` and ``--live-pcap-host HOST``."""

    fifo: Path
    host: str | None = None
    wait_s: float = 10.0


def run_live(scenario_json: str, p: Plan, *, seed: int | None, pcap: Path | None, live: LiveOptions | None = None,
             log=print, warn=print) -> tuple[str, dict[str, Any], dict[str, int | None]]:
    """Runs the emulation: (result JSON, lag report with the real-time part's
    wall time as ``realtime_s`` and, with ``live``, the live capture's counts
    as ``live_pcap``, exit codes of the commands). ``warn`` gets the one
    warning of a run that falls behind (:func:`behind_warning`)."""
    from . import _core

    capture_host = None if live is None else live_host(p, live)
    check_system(p)
    capture = None
    if live is not None:
        log(f"live capture of host {capture_host}: waiting up to {live.wait_s:g} s for a reader of {live.fifo} "
            f"(wireshark -k -i {live.fifo})")
        capture = LiveCapture(*open_fifo(live.fifo, live.wait_s))
    devices = device_names(p)
    try:
        emu = _core.Emulation(scenario_json, devices, seed, None if pcap is None else os.fspath(pcap), p.max_lag_s)
    except BaseException:
        if capture is not None:
            capture.close()
        raise
    try:
        setup(p, devices)
        for h in p.hosts:
            log(f"host {h['name']}: {h['address']} in namespace {p.namespaces[h['name']]} "
                f"(ip netns exec {p.namespaces[h['name']]} ...)")
        if capture is not None:
            i = [h["name"] for h in p.hosts].index(capture_host)
            capture.start(p.namespaces[capture_host], devices[i])
        elapsed = drive(emu, p, warn=warn)
        if capture is not None:
            capture.stop()
        result, report = emu.finish()
        codes = {a.name: (a.proc.poll() if a.proc else None) for a in p.apps}
        extra: dict[str, Any] = {"realtime_s": elapsed}
        if capture is not None:
            extra["live_pcap"] = {"host": capture_host, "packets": capture.packets, "dropped": capture.dropped,
                                  "reader_closed": capture.reader_closed, "stalled": capture.stalled}
        return result, {**json.loads(report), **extra}, codes
    except _core.CoreSimulationError as e:
        raise EmulationError(str(e)) from None
    finally:
        if capture is not None:
            capture.close()
        emu.close()
        teardown(p)


# --- the live capture (--live-pcap) -------------------------------------------------------------

def live_host(p: Plan, live: LiveOptions) -> str:
    """The external host whose device --live-pcap captures (default the
    first), and a check of the FIFO's path: both before anything is made."""
    names = [h["name"] for h in p.hosts]
    if live.host is not None and live.host not in names:
        raise EmulationError(f"--live-pcap-host {live.host}: no external host of that name "
                             f"(external hosts: {', '.join(names) or 'none'})")
    path = live.fifo
    if path.exists() and not stat.S_ISFIFO(path.stat().st_mode):
        raise EmulationError(f"--live-pcap {path}: exists and is not a FIFO (make one with `mkfifo {path}`, "
                             f"or name a path that does not exist yet: it is made and removed after)")
    if not path.exists() and not path.parent.is_dir():
        raise EmulationError(f"--live-pcap {path}: the folder {path.parent} does not exist")
    if not names:
        raise EmulationError("the scenario has no external host (hosts[i].external = { address = ... })")
    return live.host or names[0]


def open_fifo(path: Path, wait_s: float, *, clock=time.monotonic, sleep=time.sleep) -> tuple[int, Path | None]:
    """Opens the FIFO ``path`` for writing (made if it does not exist) once a
    reader has it open, waiting at most ``wait_s``: ``(fd, the path if it was
    made here, to remove after)``. The descriptor is non-blocking."""
    made = None
    if not path.exists():
        try:
            os.mkfifo(path, 0o644)
        except OSError as e:
            raise EmulationError(f"--live-pcap {path}: cannot make a FIFO: {e.strerror}") from None
        made = path
    deadline = clock() + wait_s
    try:
        while True:
            try:
                return os.open(path, os.O_WRONLY | os.O_NONBLOCK), made
            except OSError as e:
                if e.errno != errno.ENXIO:  # ENXIO: no reader yet
                    raise EmulationError(f"--live-pcap {path}: {e.strerror}") from None
            if clock() >= deadline:
                raise EmulationError(f"--live-pcap {path}: no reader opened the FIFO within {wait_s:g} s: start "
                                     f"the reader first (wireshark -k -i {path}, or tshark -i {path}), then atmlab "
                                     f"emulate")
            sleep(0.05)
    except BaseException:  # also Ctrl-C while waiting
        if made is not None:
            made.unlink(missing_ok=True)
        raise


# pcap with nanosecond timestamps; LINKTYPE_RAW (101): each record a bare IP packet, as a TUN carries it.
PCAP_MAGIC_NS = 0xA1B23C4D
LINKTYPE_RAW = 101
_SNAPLEN = 65535
_ETH_P_ALL = 0x0003
_CLONE_NEWNET = 0x40000000
_SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def pcap_header() -> bytes:
    return struct.pack("<IHHiIII", PCAP_MAGIC_NS, 2, 4, 0, 0, _SNAPLEN, LINKTYPE_RAW)


def pcap_record(ns: int, packet: bytes) -> bytes:
    data = packet[:_SNAPLEN]
    return struct.pack("<IIII", ns // 1_000_000_000, ns % 1_000_000_000, len(data), len(packet)) + data


class LiveCapture:
    """What one external host's device carries, both ways (what its kernel
    sends into the network and what the network delivers to it), written to
    a FIFO as a pcap stream while the run goes, stamped by the kernel: the
    host's own view, as tcpdump in its namespace would see it. A thread
    enters the host's namespace (setns(2), that thread only) and reads an
    AF_PACKET socket bound to the device. Records the reader does not take
    in time are dropped and counted, never waited for; a reader that goes
    away ends the capture, not the run."""

    def __init__(self, fd: int, made: Path | None) -> None:
        self.fd, self.made = fd, made
        self.packets = self.dropped = 0
        self.reader_closed = self.stalled = False
        self.error: str | None = None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._write(pcap_header(), patience_s=2.0)

    def start(self, namespace: str, device: str) -> None:
        self._thread = threading.Thread(target=self._run, args=(namespace, device), name="atmlab-live-pcap",
                                        daemon=True)
        self._thread.start()
        self._ready.wait(5.0)
        if self.error is not None:
            raise EmulationError(f"--live-pcap: {self.error}")

    def _socket(self, namespace: str, device: str) -> socket.socket:
        libc = ctypes.CDLL(None, use_errno=True)
        ns = os.open(f"/run/netns/{namespace}", os.O_RDONLY)
        try:
            if libc.setns(ns, _CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), f"setns into {namespace}: {os.strerror(ctypes.get_errno())}")
        finally:
            os.close(ns)
        sock = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(_ETH_P_ALL))
        sock.bind((device, _ETH_P_ALL))
        sock.setsockopt(socket.SOL_SOCKET, _SO_TIMESTAMPNS, 1)
        sock.settimeout(0.1)
        return sock

    def _run(self, namespace: str, device: str) -> None:
        try:
            sock = self._socket(namespace, device)
        except OSError as e:
            self.error = f"cannot capture {device} in {namespace}: {e.strerror or e}"
            self._ready.set()
            return
        self._ready.set()
        with sock:
            while not self._stop.is_set() and not self.reader_closed and not self.stalled:
                try:
                    packet, anc, _, _ = sock.recvmsg(_SNAPLEN, socket.CMSG_SPACE(16))
                except (TimeoutError, socket.timeout):
                    continue
                except OSError:
                    break  # the device went away: the run is over
                ns = time.time_ns()
                for level, kind, value in anc:
                    if level == socket.SOL_SOCKET and kind == _SO_TIMESTAMPNS and len(value) >= 16:
                        sec, nsec = struct.unpack("=qq", value[:16])
                        ns = sec * 1_000_000_000 + nsec
                if self._write(pcap_record(ns, packet), patience_s=0.5):
                    self.packets += 1
                elif not self.reader_closed and not self.stalled:
                    self.dropped += 1

    def _write(self, data: bytes, patience_s: float) -> bool:
        """Writes ``data`` (one whole record) unless the reader has gone or
        takes nothing for ``patience_s``: True if written. A record begun is
        finished (a stream with half a record is broken), for up to 5 s more;
        past that the capture ends (``stalled``)."""
        view = memoryview(data)
        deadline = time.monotonic() + patience_s
        while view:
            try:
                view = view[os.write(self.fd, view):]
                continue
            except BlockingIOError:
                pass
            except OSError:  # EPIPE: the reader closed the FIFO
                self.reader_closed = True
                return False
            begun = len(view) != len(data)
            if not begun and (time.monotonic() >= deadline or self._stop.is_set()):
                return False
            if begun and time.monotonic() >= deadline + 5.0:
                self.stalled = True
                return False
            select.select([], [self.fd], [], 0.1)
        return True

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    def close(self) -> None:
        self.stop()
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.made is not None:
            self.made.unlink(missing_ok=True)
            self.made = None


def drive(emu: Any, p: Plan, *, clock=time.monotonic, start=None, warn=print) -> float:
    """The real-time part: starts the commands at their times and steps the
    driver until the end of the run or until every waited command has
    exited; returns its wall time, s. Once a second it looks at the lag
    report and, the first time the run is persistently behind, calls
    ``warn`` (once)."""
    start = start or (lambda a: _start(a, p.namespaces[a.host]))
    t0 = clock()
    pending = sorted(p.apps, key=lambda a: a.start_s)
    waited = [a for a in p.apps if a.wait]
    checked, warned = 0.0, False
    while True:
        now = clock() - t0
        while pending and pending[0].start_s <= now:
            start(pending.pop(0))
        if emu.step(_STEP_S):
            break
        if not warned and now - checked >= 1.0:
            checked = now
            message = behind_warning(json.loads(emu.report()), now, during=True)
            if message is not None:
                warn(message)
                warned = True
        if waited and not pending and all(a.proc is not None and a.proc.poll() is not None for a in waited):
            emu.end_now()
    return clock() - t0


# Persistently behind: more than this much time behind real time...
BEHIND_S = 1.0
# ... or this share of the run's wall time (for runs under 10 s) ...
BEHIND_SHARE = 0.10
# ... but never for less than this (a start-up hiccup).
BEHIND_FLOOR_S = 0.1


def behind_warning(report: dict[str, Any], elapsed_s: float, *, during: bool = False) -> str | None:
    """A one-line warning when the run spent more than min(1 s, 10 % of its
    wall time so far), and at least 0.1 s, in turns that started more than
    1 ms behind the wall clock (the report's ``behind_s``); None otherwise."""
    behind = float(report.get("behind_s", 0.0))
    if behind <= max(BEHIND_FLOOR_S, min(BEHIND_S, BEHIND_SHARE * elapsed_s)):
        return None
    when = "so far" if during else "in all"
    return (f"warning: the simulation ran behind real time for {behind:.1f} s of {elapsed_s:.1f} s {when} "
            f"(event lag up to {float(report.get('lag_max_s', 0.0)) * 1e3:.0f} ms), so the hosts met a slower, "
            f"later network than the scenario's: simulate fewer cells per second (fewer sources or VCs, fewer "
            f"hops, slower links or adapter peaks), leave the machine's cores to the run, or set realtime.max_lag "
            f"to stop instead; `atmlab bench SCENARIO` tells how fast it runs alone")


def replay(scenario_json: str, trace: Path, *, seed: int | None, pcap: Path | None) -> tuple[str, dict[str, Any]]:
    from . import _core

    try:
        result, counts = _core.replay(scenario_json, os.fspath(trace), seed, None if pcap is None else os.fspath(pcap))
    except (ValueError, OSError) as e:
        raise EmulationError(str(e)) from None
    return result, json.loads(counts)


def live_summary(c: dict[str, Any]) -> str:
    """One line on what the live capture wrote."""
    line = f"live capture: {c['packets']} packets written"
    if c.get("host"):
        line += f" (host {c['host']}, both ways)"
    if c["dropped"]:
        line += f", {c['dropped']} dropped (the reader did not keep up)"
    if c["reader_closed"]:
        line += "; the reader closed the FIFO, which ended the capture (not the run)"
    if c["stalled"]:
        line += "; the reader stopped reading, which ended the capture (not the run)"
    return line


def lag_lines(r: dict[str, Any]) -> list[tuple[str, str]]:
    ms = lambda s: f"{s * 1e3:.3f} ms"  # noqa: E731
    return [
        ("event lag", f"median {ms(r['lag_p50_s'])}, p99 {ms(r['lag_p99_s'])}, max {ms(r['lag_max_s'])} "
                      f"({r['lag_samples']} of {r['turns']} turns late)"),
        ("time behind (> 1 ms)", f"{r['behind_s']:.3f} s"
                                 + (f" of {r['realtime_s']:.3f} s in real time" if "realtime_s" in r else "")),
        ("delivery lateness", f"median {ms(r['delivery_p50_s'])}, p99 {ms(r['delivery_p99_s'])}, "
                              f"max {ms(r['delivery_max_s'])}"),
        ("packets", f"{r['packets_in']} in, {r['packets_out']} out, {r['late_packets']} more than 1 ms late, "
                    f"{r['packets_refused']} refused, {r['write_errors']} write errors"),
        ("back-pressure", f"{r['blocked_turns']} turns with a device unread"),
        *([("refused", "; ".join(f"{why}: {n}" for why, n in r["refused"].items()))] if r.get("refused") else []),
    ]
