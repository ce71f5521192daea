"""A minimal webhook receiver for the delivery bench, run as its own process: HTTP/1.1
keep-alive on raw asyncio streams, 200 to every POST, arrival time (time.time()) recorded per
`webhook-id`; `GET /log` answers the record as JSON and clears it.

    python bench/receiver.py PORT
"""

from __future__ import annotations

import asyncio
import json
import sys
import time

import uvloop

arrivals: dict[str, float] = {}


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length, delivery = 0, None
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                lowered = name.strip().lower()
                if lowered == b"content-length":
                    length = int(value)
                elif lowered == b"webhook-id":
                    delivery = value.strip().decode()
            if length:
                await reader.readexactly(length)
            if head.startswith(b"GET /log"):
                body = json.dumps(arrivals).encode()
                arrivals.clear()
            else:
                if delivery is not None:
                    arrivals.setdefault(delivery, time.time())
                body = b'{"ok":true}'
            writer.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
                + body
            )
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def main(port: int) -> None:
    server = await asyncio.start_server(serve, "127.0.0.1", port, backlog=1024)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    uvloop.run(main(int(sys.argv[1])))
