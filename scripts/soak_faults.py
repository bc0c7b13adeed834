"""The faults of the fault soak (scripts/soak.py) that need more than a
signal: a network that slows down, and a disk that fills."""

import asyncio
import os
import socket
import threading


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fill_disk(directory, secs):
    """Fills the file system of `directory` with a ballast file, and frees
    it after `secs`."""
    ballast = os.path.join(directory, "ballast")
    with open(ballast, "wb") as f:
        chunk = b"\0" * (1 << 20)
        try:
            while True:
                f.write(chunk)
                f.flush()
        except OSError:
            pass
    threading.Timer(secs, lambda: os.remove(ballast)).start()


class SlowProxy:
    """A TCP proxy in front of a stand-in; `slow(delay, secs)` holds every
    chunk relayed in either direction for `delay` seconds, for `secs`."""

    def __init__(self, target_port):
        self.target, self.port, self.delay = target_port, free_port(), 0.0
        self.loop = asyncio.new_event_loop()
        ready = threading.Event()
        threading.Thread(target=self._run, args=(ready,), daemon=True).start()
        ready.wait()

    def _run(self, ready):
        asyncio.set_event_loop(self.loop)
        self.server = self.loop.run_until_complete(
            asyncio.start_server(self._serve, "127.0.0.1", self.port))
        ready.set()
        self.loop.run_forever()

    async def _serve(self, reader, writer):
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _pipe(self, reader, writer):
        try:
            while chunk := await reader.read(65536):
                if self.delay:
                    await asyncio.sleep(self.delay)
                writer.write(chunk)
                await writer.drain()
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    def slow(self, delay, secs):
        self.delay = delay
        threading.Timer(secs, lambda: setattr(self, "delay", 0.0)).start()
