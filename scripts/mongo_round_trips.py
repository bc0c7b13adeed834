"""Counts the round trips a MongoDB client makes: a TCP proxy in front of a
server that reads each message the client sends (the wire protocol's
header, and of an OP_MSG its command's name and the documents it carries)
and relays it unchanged.

    python3 scripts/mongo_round_trips.py LISTEN_PORT TARGET_HOST:TARGET_PORT OUT.json

Runs until SIGTERM or SIGINT, then writes OUT.json: per command name, the
messages sent (each answered once: a round trip) and the documents they
carried in document sequences (a bulk insert's, update's or delete's
batch). The driver's own monitoring (hello, ping...) is counted under its
name like any other command."""

import asyncio
import json
import signal
import struct
import sys

OP_MSG = 2013


# The batches a write command carries in its own document.
BATCHES = {b"documents", b"updates", b"deletes"}

# Sizes of the BSON values this walk steps over that are not length-prefixed.
FIXED = {0x01: 8, 0x07: 12, 0x08: 1, 0x09: 8, 0x0A: 0, 0x10: 4, 0x11: 8,
         0x12: 8, 0x13: 16, 0x7F: 0, 0xFF: 0}


def top_level(doc, at):
    """(key, type, value offset, value end) of each element of the BSON
    document at `at`."""
    (size,) = struct.unpack_from("<i", doc, at)
    end, at = at + size - 1, at + 4
    while at < end:
        kind = doc[at]
        key_end = doc.index(b"\0", at + 1)
        key, at = doc[at + 1:key_end], key_end + 1
        if kind in FIXED:
            n = FIXED[kind]
        elif kind in (0x02, 0x0D, 0x0E):  # string, code, symbol
            n = 4 + struct.unpack_from("<i", doc, at)[0]
        elif kind == 0x05:  # binary
            n = 5 + struct.unpack_from("<i", doc, at)[0]
        elif kind in (0x03, 0x04, 0x0F):  # document, array, code with scope
            n = struct.unpack_from("<i", doc, at)[0]
        elif kind == 0x0B:  # regex: two C strings
            n = doc.index(b"\0", doc.index(b"\0", at) + 1) + 1 - at
        else:
            return
        yield key, kind, at, at + n
        at += n


def command_of(body):
    """The command's name and the documents of its batch (in the command
    or in a document sequence), from an OP_MSG's body (after the 16-byte
    header)."""
    name, docs, at = None, 0, 4  # flagBits
    while at < len(body):
        kind = body[at]
        at += 1
        (size,) = struct.unpack_from("<i", body, at)
        if kind == 0:
            for i, (key, t, start, end) in enumerate(top_level(body, at)):
                if i == 0:  # the first key names the command, its value the collection
                    name = key.decode("utf-8", "replace")
                    if t == 0x02:
                        name += " " + body[start + 4:end - 1].decode("utf-8", "replace")
                elif t == 0x04 and key in BATCHES:
                    docs += sum(1 for _ in top_level(body, start))
        elif kind == 1:
            ident_end = body.index(b"\0", at + 4)
            doc = ident_end + 1
            while doc < at + size:
                (n,) = struct.unpack_from("<i", body, doc)
                docs, doc = docs + 1, doc + n
        else:
            break
        at += size
    return name, docs


class Counts:
    def __init__(self):
        self.by_command = {}

    def add(self, name, docs):
        c = self.by_command.setdefault(name, {"messages": 0, "documents": 0})
        c["messages"] += 1
        c["documents"] += docs


async def relay_counting(reader, writer, counts):
    """Relays the client's messages whole, counting each."""
    try:
        while True:
            header = await reader.readexactly(16)
            length, _, _, opcode = struct.unpack("<iiii", header)
            body = await reader.readexactly(length - 16)
            if opcode == OP_MSG:
                counts.add(*command_of(body))
            else:
                counts.add(f"opcode {opcode}", 0)
            writer.write(header + body)
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        writer.close()


async def relay(reader, writer):
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except OSError:
        pass
    finally:
        writer.close()


async def main(port, target, out):
    host, target_port = target.rsplit(":", 1)
    counts = Counts()

    async def serve(reader, writer):
        try:
            up_reader, up_writer = await asyncio.open_connection(host, int(target_port))
        except OSError:
            writer.close()
            return
        await asyncio.gather(relay_counting(reader, up_writer, counts), relay(up_reader, writer))

    server = await asyncio.start_server(serve, "127.0.0.1", port)
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        asyncio.get_running_loop().add_signal_handler(sig, stop.set)
    async with server:
        await stop.wait()
    with open(out, "w") as f:
        json.dump(counts.by_command, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2], sys.argv[3]))
