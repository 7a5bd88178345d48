"""The cell calculator: the published cell counts, its errors, its command."""

from __future__ import annotations

import json

import pytest

import atmlab
from atmlab import reference


def test_kpn_tables_5_and_6_through_the_api():
    t5 = reference.table("kpn/table05_udp_datagram_to_cells")
    for r in t5[t5.data_size_bytes <= 9000].itertuples():
        w = atmlab.cells(r.data_size_bytes, mtu=9188, encap="null")
        assert (w.datagrams, w.cells) == (r.datagrams_per_burst, r.cells_per_burst)
    t6 = reference.table("kpn/table06_udp_fragmentation_mtu48")
    exact = 0
    for r in t6.itertuples():
        w = atmlab.cells(r.data_size_bytes, mtu=48, encap="null", fragmentation="berkeley")
        assert w.datagrams == r.udp_datagrams_per_burst
        exact += w.cells == r.cells_per_burst
    assert exact == 16  # the two others are the source's flagged misprints (docs/models/aal5.md)


def test_voice_packet_and_tcp_segments():
    assert atmlab.cells(80).cells == 3  # 000 s6.1.3: three cells per voice packet
    w = atmlab.cells(512, proto="tcp", mtu=552)
    assert (w.datagrams, w.cells) == (1, 12)  # 97-0424: 80.5% of the cell rate
    assert w.efficiency == pytest.approx(512 / (12 * 53))


@pytest.mark.parametrize("kwargs, words", [
    ({"mtu": 20}, "mtu: 20 bytes is outside 28"),
    ({"mtu": 40, "proto": "tcp"}, "mtu: 40 bytes is outside 41"),
    ({"proto": "sctp"}, "proto"),
    ({"encap": "llc"}, "encap"),
    ({"fragmentation": "bsd"}, "fragmentation"),
])
def test_bad_arguments_name_themselves(kwargs, words):
    with pytest.raises(ValueError, match=words):
        atmlab.cells(100, **kwargs)
    with pytest.raises(ValueError, match="payload"):
        atmlab.cells(70000)
    with pytest.raises(ValueError, match="payload"):
        atmlab.cells(-1)


def test_cells_command(cli):
    p = cli("cells", "--payload", "9000", "--mtu", "48", "--encap", "null", "--fragmentation", "berkeley", "--json")
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert (d["datagrams"], d["cells"]) == (376, 751)
    p = cli("cells", "--payload", "80")
    assert p.returncode == 0 and "3 cells" in p.stdout
    p = cli("cells", "--payload", "100", "--mtu", "20")
    assert p.returncode == 2 and "--mtu" in p.stderr and "Traceback" not in p.stderr
