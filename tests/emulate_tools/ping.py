"""ICMP echo with a raw socket (no `ping` binary needed): ping.py ADDR COUNT OUT
writes one round-trip time in seconds per line to OUT."""

import socket
import struct
import sys
import time


def checksum(b: bytes) -> int:
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack(f"!{len(b) // 2}H", b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


addr, count, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
s.settimeout(5)
rtts = []
for seq in range(count):
    body = struct.pack("!HH", 0x4154, seq) + b"atmlab" * 8
    head = struct.pack("!BBH", 8, 0, 0)
    packet = head[:2] + struct.pack("!H", checksum(head + body)) + body
    t = time.monotonic()
    s.sendto(packet, (addr, 0))
    while True:
        data, _ = s.recvfrom(65535)
        icmp = data[(data[0] & 0x0F) * 4:]
        if icmp[0] == 0 and struct.unpack("!H", icmp[6:8])[0] == seq:
            rtts.append(time.monotonic() - t)
            break
    time.sleep(0.1)
with open(out, "w") as f:
    f.write("".join(f"{r}\n" for r in rtts))
