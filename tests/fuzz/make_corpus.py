"""Writes the seed corpus of the fuzz harnesses (valid messages of each kind) into corpus/."""
import hashlib
import hmac
import os
import struct

here = os.path.dirname(os.path.abspath(__file__))


def hdr(ftype, length=0, seq=0, flags=0, credit=0, gid=0, src=0, tag=0, id_=0, aux=0):
    return struct.pack("<IBBHIIIIQQQQ", 0x4F495457, 4, ftype, flags, seq, credit, gid, src, tag, length, id_, aux)


def short(length, seq=0, credit=0, gid=0, src=0, tag=0):
    """The short EAGER header (protocol 3, 24 bytes)."""
    return struct.pack("<BBHIIIII", 0xA7, 0, length, seq, credit, gid, src, tag)


def entry(port, ip=(127, 0, 0, 1), flags=0, transports=3, token=0x5678, ext=b""):
    """A table entry (protocol 4): the 44-byte fixed part (family, flags, port, address, host id,
    transports, token, extension length, 2 reserved zero bytes), then the extension."""
    return struct.pack("<BBH16sQB3xQHxx", 4, flags, port, bytes(ip) + bytes(12), 0x1234, transports, token,
                       len(ext)) + ext


def put(kind, name, data):
    d = os.path.join(here, "corpus", kind)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


for t, n in [(4, 100), (5, 0), (6, 0), (7, 65536), (8, 0), (9, 0), (10, 56), (11, 48), (12, 20), (16, 0)]:
    put("frame", f"type{t}", hdr(t, n, seq=3))
# the decoder reads at most 56 bytes: a short header followed by what a payload could be
put("frame", "short-eager", short(8, seq=3, credit=4096, gid=5, src=1, tag=7) + bytes(32))
hello = os.urandom(32) + struct.pack("<IIII", 1, 3, 65536, 1 << 20)
put("handshake", "hello", hdr(1, len(hello)) + hello)
put("handshake", "hello-then-garbage", hdr(1, len(hello)) + hello + hdr(3, 32, seq=1) + bytes(32) + b"x" * 40)
put("handshake", "simultaneous", hdr(1, len(hello), src=7) + os.urandom(32) + struct.pack("<IIII", 7, 3, 1, 1))
put("handshake", "eager-before-auth", hdr(4, 8) + b"12345678")
put("handshake", "hello-auth-accept", hdr(1, len(hello)) + hello + hdr(3, 32, seq=1) + bytes(32) + hdr(16, seq=2))
reg = struct.pack("<IIII", 2, 1, 0, 2) + entry(4000) + entry(4001)
put("register", "reg-block", b"\x01" + reg)
put("register", "reg-one", b"\x01" + struct.pack("<IIII", 2, 0, 1, 2) + entry(4002))
table = struct.pack("<III", 2, 1, 2) + entry(4000) + entry(4001) + entry(4002)
put("register", "table-2pb", b"\x02" + table)
# extensions (the ucx worker address): small, the largest accepted (2048), one over it, one that
# runs past the payload, and a table whose entries carry them
ucx = bytes(range(256)) * 8
put("register", "reg-ext", b"\x01" + struct.pack("<IIII", 2, 1, 0, 3) + entry(4000, ext=b"w" * 77) +
    entry(4001) + entry(4002, ext=ucx))
put("register", "reg-ext-over", b"\x01" + struct.pack("<IIII", 1, 0, 0, 1) + entry(4000, ext=ucx + b"x"))
put("register", "reg-ext-overrun", b"\x01" + struct.pack("<IIII", 1, 0, 0, 2) + entry(4000, ext=b"e" * 30)[:-9])
put("register", "table-ext", b"\x02" + struct.pack("<III", 2, 1, 2) + entry(4000, ext=b"a" * 300) +
    entry(4001) + entry(4002, ext=b"b" * 5))
# the master's roster (byte 0 = 3): 2 PBs, limit 1 + 7, then le16-length-prefixed REGISTERs: PB 1
# (size 2) complete, PB 0 in two blocks, and a claim over the limit (refused)
regs = [struct.pack("<IIII", 2, 1, 0, 2) + entry(4000, ext=b"x" * 40) + entry(4001),
        struct.pack("<IIII", 2, 0, 1, 3) + entry(4002) + entry(4003),
        struct.pack("<IIII", 2, 0, 0, 3) + entry(4004),
        struct.pack("<IIII", 2, 1, 5, 1 << 24) + entry(4005)]
put("register", "roster-2pb", b"\x03\x01\x07\x00" + b"".join(struct.pack("<H", len(r)) + r for r in regs))

# fuzz_session: byte 0 = what the harness repairs (1 seq, 2 length, 4 request ids), then the
# frames process 1 sends after the handshake (group 3, process 1 is rank 1; the harness posted
# receives of tags 0..3 and a 300 KiB rendezvous send, request ids 0..4 in that order)
msgs = [
    hdr(4, 100, gid=3, src=1, tag=0) + bytes(range(100)),                       # eager, matched
    hdr(4, 5000, gid=3, src=1, tag=9) + b"u" * 5000,                            # eager, unexpected
    hdr(5, 0, gid=3, src=1, tag=1, id_=77, aux=40000),                          # RTS
    hdr(7, 32768, id_=1, aux=0) + b"d" * 32768,                                 # DATA for it
    hdr(5, 16, flags=0x40, gid=3, src=1, tag=2, id_=78, aux=1000) + struct.pack("<QQ", 4096, 8192),
    hdr(5, 8, flags=0x40, gid=3, src=1, tag=2, id_=79, aux=1000) + struct.pack("<Q", 4096),
    hdr(6, 0, id_=4, aux=12345),                                                # CTS for the send
    hdr(6, 0, flags=0x40, id_=4, aux=1),                                        # CTS(CMA): not offered
    hdr(8, 0, credit=65536), hdr(13, 0), hdr(13, 0, flags=0x8), hdr(9, 0),      # CREDIT, IDLE_CLOSE, BYE
    hdr(10, 48), hdr(1, 48) + bytes(48),                                        # no business here
]
put("session", "all-kinds", b"\x07" + b"".join(msgs))
for i, m in enumerate(msgs):
    put("session", f"one-{i}", b"\x07" + m)
put("session", "raw", b"\x00" + hdr(4, 10, seq=2, gid=3, src=1) + b"0123456789")
# short EAGER headers (bit 3: a frame whose first byte is the mark 0xa7 goes short; the harness
# starts a frame only while 56 input bytes are left): matched, empty, unexpected, then a full frame
put("session", "short-eager", b"\x0b" + short(16, gid=3, src=1, tag=1) + b"s" * 16 +
    short(0, gid=3, src=1, tag=3) + short(300, gid=3, src=1, tag=11) + b"t" * 300 +
    hdr(8, 0, credit=4096) + bytes(56))

# fuzz_segment: byte 0 bit 0 = a record (refused: none is made with the key here), else a segment
# checked as stream 0x1122334455667788, position 0, from process 1 to process 0, in direction 'c'
# (bit 1 clear) or 'a' (bit 1 set). Segment version 2: the MAC is HMAC-SHA256(file key, binding ||
# payload || header), binding = direction byte, 3 zero bytes, le32 writer, le32 reader, 4 zero bytes.
SEG_KEY = b"fuzz-file-key-0123456789abcdef!\0"


def segment(payload, direction, flags=0, seq=0, nonce=0x1122334455667788, writer=1, reader=0, version=2):
    h = struct.pack("<QHHIQQQQ", 0x32304745534f4957, version, flags, 0, nonce, seq, len(payload), 0)
    bind = struct.pack("<B3xIII", ord(direction), writer, reader, 0)
    return h + payload + hmac.new(SEG_KEY, bind + payload + h, hashlib.sha256).digest()


put("segment", "segment-c", b"\x00" + segment(b"hello over files" * 8, "c"))
put("segment", "segment-a", b"\x02" + segment(bytes(range(256)), "a"))
put("segment", "segment-fin", b"\x00" + segment(b"", "c", flags=1))
put("segment", "segment-c-replayed-as-a", b"\x02" + segment(b"hello over files" * 8, "c"))
put("segment", "segment-other-writer", b"\x00" + segment(b"x" * 40, "c", writer=2))
put("segment", "segment-version-1", b"\x00" + segment(b"old", "c", version=1))
put("segment", "segment-bad-mac", b"\x00" + segment(b"d" * 100, "c")[:-32] + os.urandom(32))

