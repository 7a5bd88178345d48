"""sink.py ADDR PORT OUT: accepts one TCP connection, writes the SHA-256 of
what it received and its length to OUT."""

import hashlib
import socket
import sys

addr, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
srv = socket.create_server((addr, port))
conn, _ = srv.accept()
h, n = hashlib.sha256(), 0
while chunk := conn.recv(1 << 16):
    h.update(chunk)
    n += len(chunk)
with open(out, "w") as f:
    f.write(f"{h.hexdigest()} {n}\n")
