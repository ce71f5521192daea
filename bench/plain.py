"""A plain FastAPI app with the bench's bare endpoint and nothing else: no service middleware,
no other routes. The baseline `bench/request_path.py` measures the app's request path against.
"""

from __future__ import annotations

from fastapi import FastAPI

from bench.app import Item


def create() -> FastAPI:
    app = FastAPI()

    @app.get("/bench/bare", response_model=Item)
    async def bare() -> Item:
        return Item(id=1, name="widget", price=9.99, tags=["a", "b"])

    return app
