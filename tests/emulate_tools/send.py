"""send.py ADDR PORT BYTES OUT [INFO]: connects (retrying while the sink
starts), sends BYTES pseudo-random bytes, waits for the sink to close (so
every byte and the FIN were received, and every retransmission they needed
was sent), writes their SHA-256 and length to OUT and, given INFO, the
kernel's retransmission count of the connection (and the path MTU) to INFO.

The count is `tcpi_total_retrans` of Linux's `struct tcp_info`
(include/uapi/linux/tcp.h), read with getsockopt(IPPROTO_TCP, TCP_INFO):
after eight one-byte fields (state, ca_state, retransmits, probes, backoff,
options, the window scales, two flags) come 32-bit fields: rto (offset 8),
ato, snd_mss, rcv_mss, unacked, sacked, lost, retrans, fackets,
last_data_sent, last_ack_sent, last_data_recv, last_ack_recv, pmtu,
rcv_ssthresh, rtt, rttvar, snd_ssthresh, snd_cwnd, advmss, reordering,
rcv_rtt, rcv_space, then total_retrans at offset 8 + 23 * 4 = 100, in the
machine's byte order. It counts every segment the kernel sent again (timeout,
fast retransmit, RACK, tail-loss probe, SYN), for the whole connection."""

import hashlib
import random
import socket
import struct
import sys
import time

PMTU = 60  # offset of tcpi_pmtu (the path MTU: the device's MTU here; a check on the layout)
TOTAL_RETRANS = 100  # offset of tcpi_total_retrans in struct tcp_info (Linux)

addr, port, size, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
info = sys.argv[5] if len(sys.argv) > 5 else None
data = random.Random(33).randbytes(size)
for _ in range(100):
    try:
        s = socket.create_connection((addr, port), timeout=60)
        break
    except OSError:
        time.sleep(0.1)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
while s.recv(1 << 16):  # the sink sends nothing; EOF when it closes, after our FIN
    pass
if info is not None:
    raw = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    (pmtu,) = struct.unpack_from("=I", raw, PMTU)
    (retrans,) = struct.unpack_from("=I", raw, TOTAL_RETRANS)
    with open(info, "w") as f:
        f.write(f"pmtu {pmtu}\ntotal_retrans {retrans}\n")
s.close()
with open(out, "w") as f:
    f.write(f"{hashlib.sha256(data).hexdigest()} {size}\n")
