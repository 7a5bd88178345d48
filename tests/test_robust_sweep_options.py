"""A sweep's options checked before anything runs or is created
(issue 29, item 8): a --ci-metric that names no metric, a replication count
above the default cap, an address that is no Dask scheduler."""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import suppress

import pytest

import atmlab
from atmlab import executors
from atmlab.store import RUN_METRICS

from conftest import TWO_HOSTS, atmlab_cli

NAMES = ", ".join(RUN_METRICS)


@pytest.mark.parametrize("name", ["bogus", "connections.voice.goodput_bps", "", 3, None])
def test_a_ci_metric_that_is_no_run_level_metric_is_refused_by_the_api(name):
    with pytest.raises(atmlab.ArgumentError) as e:
        atmlab.Sweep(TWO_HOSTS, ci_target=0.01, ci_metric=name)  # type: ignore[arg-type]
    assert str(e.value) == f"ci_metric {name!r} is not a run-level metric; use one of: {NAMES}"


def test_every_run_level_metric_is_a_ci_metric():
    for name in RUN_METRICS:
        assert atmlab.Sweep(TWO_HOSTS, ci_target=0.01, ci_metric=name).ci_metric == name


def test_a_ci_metric_that_is_no_metric_is_a_usage_error_before_the_database_exists(tmp_path):
    db = tmp_path / "r.sqlite"
    p = atmlab_cli("sweep", "scenarios/examples/sweep_buffer.toml", "--ci-target", "0.01", "--ci-metric", "bogus",
                   "--db", str(db))
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert p.stderr.strip().splitlines()[-1] == (f"Error: Invalid value for '--ci-metric': 'bogus' is not a run-level "
                                                 f"metric; use one of: {NAMES}")
    assert not db.exists() and p.stdout == ""


# ------------------------------------------------ replications above the default cap

def test_more_replications_than_the_default_cap_are_accepted_by_the_api():
    assert atmlab.Sweep(TWO_HOSTS, replications=31).replications == 31
    s = atmlab.Sweep(TWO_HOSTS, replications=31, ci_target=0.01)
    assert (s.replications, s.max_replications) == (31, 31)  # the cap rises to -r
    assert atmlab.Sweep(TWO_HOSTS, replications=2, ci_target=0.01).max_replications == 30
    assert atmlab.Sweep(TWO_HOSTS, replications=5, max_replications=4).replications == 5  # no target: no use


@pytest.mark.parametrize("target", [[], ["--ci-target", "0.01"]], ids=["no-target", "target"])
def test_sweep_r_31_runs_without_max_replications(target, tmp_path):
    p = atmlab_cli("sweep", "scenarios/examples/sweep_buffer.toml", "-r", "31", *target, "--dry-run")
    assert p.returncode == 0, p.stderr
    first = " ".join(p.stdout.split("┏")[0].split())  # the line above the table, as rich wrapped it
    assert re.match(r"sweep_buffer( \([0-9a-f]+\))?: 8 points x 31 replications = 248 runs", first), first
    assert first.endswith("(at most 31)") if target else "at most" not in first


def test_an_explicit_cap_below_r_is_refused_only_with_a_target():
    args = ["sweep", "scenarios/examples/sweep_buffer.toml", "-r", "5", "--max-replications", "4", "--dry-run"]
    assert atmlab_cli(*args).returncode == 0
    p = atmlab_cli(*args, "--ci-target", "0.01")
    assert p.returncode == 2 and p.stderr.strip().splitlines()[-1] == (
        "Error: Invalid value for --max-replications: is below --replications")


# ------------------------------------------------ --dask at something that is no Dask scheduler

@pytest.fixture
def fake_server() -> Iterator[Callable[[bytes | None], str]]:
    """Starts TCP servers on this machine that are not Dask schedulers:
    each answers a connection with `banner` (an SSH or HTTP server's
    first bytes), or with nothing at all (None), and returns its address."""
    servers: list[socket.socket] = []

    def start(banner: bytes | None) -> str:
        server = socket.create_server(("127.0.0.1", 0))
        servers.append(server)

        def serve() -> None:
            with suppress(OSError):
                while True:
                    conn, _ = server.accept()
                    if banner is not None:
                        conn.sendall(banner)
                    servers.append(conn)  # kept open: a silent server never closes either

        threading.Thread(target=serve, daemon=True).start()
        return f"tcp://127.0.0.1:{server.getsockname()[1]}"

    yield start
    for s in servers:
        s.close()


BANNERS = {"ssh": b"SSH-2.0-OpenSSH_8.9p1 Ubuntu-3ubuntu0.6\r\n",
           "http": b"HTTP/1.0 400 Bad Request\r\nContent-Type: text/html\r\n\r\n<html>bad</html>\n"}


@pytest.mark.parametrize("kind", BANNERS)
def test_dask_at_another_server_is_one_error_naming_it_before_the_database_exists(fake_server, tmp_path, kind):
    address = fake_server(BANNERS[kind])
    db = tmp_path / "r.sqlite"
    p = atmlab_cli("sweep", "scenarios/examples/sweep_buffer.toml", "--dask", address, "--db", str(db))
    assert p.returncode == 2 and "Traceback" not in p.stderr and "internal error" not in p.stderr, p.stderr
    assert p.stderr == (f"error: --dask {address}: no Dask scheduler answers there: what it sent is not Dask's "
                        "handshake (MemoryError); give the address of a running scheduler (tcp://HOST:8786), or "
                        "--dask local\n")
    assert not db.exists()


def test_dask_at_a_silent_server_gives_up_after_the_timeout(fake_server, tmp_path, monkeypatch):
    """dask.distributed's own handshake would wait for ever."""
    monkeypatch.setattr(executors, "DASK_CONNECT_S", 1.0)
    address = fake_server(None)
    raised: list[BaseException] = []

    def sweep() -> None:
        try:
            atmlab.Sweep(TWO_HOSTS).run(tmp_path / "r.sqlite", dask=address)
        except BaseException as e:
            raised.append(e)

    worker = threading.Thread(target=sweep, daemon=True)  # a hang fails the test, not the test run
    worker.start()
    worker.join(30)
    assert not worker.is_alive(), "still connecting after 30 s"
    assert len(raised) == 1 and isinstance(raised[0], atmlab.AtmlabError), raised
    assert str(raised[0]).startswith(f"--dask {address}: no Dask scheduler answers there: no Dask handshake within "
                                     "1 s")
    assert not (tmp_path / "r.sqlite").exists()


def test_dask_where_nothing_listens_is_one_error(tmp_path, monkeypatch):
    monkeypatch.setattr(executors, "DASK_CONNECT_S", 1.0)
    with socket.create_server(("127.0.0.1", 0)) as s:
        address = f"tcp://127.0.0.1:{s.getsockname()[1]}"  # closed below: a port where nothing listens
    with pytest.raises(atmlab.AtmlabError, match=f"^--dask {address}: no Dask scheduler answers there: Timed out "):
        atmlab.Sweep(TWO_HOSTS).run(tmp_path / "r.sqlite", dask=address)
    assert not (tmp_path / "r.sqlite").exists()


def test_a_real_scheduler_passes_the_handshake(tmp_path):
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                      dashboard_address=None) as cluster:
        assert cluster.scheduler_address.startswith("tcp://")
        out = atmlab.Sweep(TWO_HOSTS).run(tmp_path / "r.sqlite", dask=cluster.scheduler_address)
    assert (out.ran, out.failed, out.executor) == (1, 0, f"Dask cluster at {cluster.scheduler_address}")
