"""send.py ADDR PORT BYTES OUT: connects (retrying while the sink starts),
sends BYTES pseudo-random bytes, writes their SHA-256 and length to OUT."""

import hashlib
import random
import socket
import sys
import time

addr, port, size, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
data = random.Random(33).randbytes(size)
for _ in range(100):
    try:
        s = socket.create_connection((addr, port), timeout=30)
        break
    except OSError:
        time.sleep(0.1)
s.sendall(data)
s.close()
with open(out, "w") as f:
    f.write(f"{hashlib.sha256(data).hexdigest()} {size}\n")
